"""An entry whose bot never connects, or faults in every game, fails the command.

Its results are still stored and shown, but the exit status is 1, with one line that names
the entry, its last fault (seat, game, deal, the log) and the end of its stderr. Real bot
processes, real referee, real database.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

from tests.test_cli import tavolo

BROKEN = "import sys; sys.stderr.write('boom at start\\n'); sys.exit(3)"
COMMAND = "cmd:" + shlex.join([sys.executable, "-c", BROKEN])


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def test_play_fails_when_an_entry_never_connects(tmp_path: Path) -> None:
    result = tavolo(
        "play", "random", COMMAND, "--seed", "s", "--deals", "1", "--quiet",
        "--connect-timeout", "5", "--workdir", tmp_path,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    name = Path(sys.executable).name
    [error] = _errors(result.stderr)
    assert re.fullmatch(
        f"error: entry {name!r} faulted in all 2 games it played; the last: crash: never "
        rf"connected \(entry {name!r}, seat \d, game 2, deal 1\): exit status 3; log \S+"
        "/stderr.log; stderr ends: boom at start",
        error,
    ), error
    assert "game 2:" in result.stdout  # the match was played out and shown


def test_a_tournament_stores_everything_and_then_fails(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        'name = "t"\n[game]\ndeals = 1\n[match]\ngames = 2\nconnect_timeout = 5\n'
        '[[entry]]\nname = "good"\nbot = "random"\n'
        f'[[entry]]\nname = "broken"\nbot = {json.dumps(COMMAND)}\n',
        encoding="utf-8",
    )
    result = tavolo("tournament", "run", path, "--db", tmp_path / "t.db", "--quiet")
    assert result.exit_code == 1, result.output
    [error] = _errors(result.stderr)
    assert re.fullmatch(
        "error: entry 'broken' faulted in all 2 games it played; the last: crash: never "
        r"connected \(entry 'broken', seat \d, game \d, deal 1\): exit status 3; log "
        rf"{re.escape(str(tmp_path / 't.logs'))}/match-1/\S+/stderr.log; "
        "stderr ends: boom at start",
        error,
    ), error
    assert "2 games played now, 2 of 2 stored" in result.stdout
    table = tavolo("tournament", "table", "--db", tmp_path / "t.db")
    assert table.exit_code == 0 and "broken" in table.stdout


def test_a_bot_that_plays_is_no_failure() -> None:
    result = tavolo("play", "random", "random", "--seed", "s", "--deals", "1", "--quiet")
    assert result.exit_code == 0, result.output
    assert not _errors(result.stderr)


def test_version() -> None:
    result = tavolo("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith("tavolo ") and result.stdout.split()[1][0].isdigit()
