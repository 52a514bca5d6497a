"""Fault lines say who, where and why: the entry and seat, the game and deal, the end of the
bot's stderr and where its log is kept; the logs are kept by default, capped; a run prints
a line per game where no bar can be drawn; an entry that faulted in every game fails it.

Real CLI, real sandboxed bot processes (the Python SDK), real gRPC, real SQLite.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.records import verify_lines
from tests.helpers import record_games
from tests.sandboxing import require_sandbox
from tests.test_cli import assert_one_error, tavolo
from tournaments.storage import Store

RAISES = '''
from tavolo_bot import Bot, run


class Raises(Bot):
    """Plays two actions a game, then raises: a bug of the bot's own."""

    def __init__(self) -> None:
        self.asked = 0

    def on_event(self, event):
        if event.WhichOneof("event") == "game_started":
            self.asked = 0

    def choose(self, turn):
        self.asked += 1
        if self.asked > 2:
            raise ValueError("the bot's own bug, deal after deal")
        return turn.legal[0].id


if __name__ == "__main__":
    raise SystemExit(run(Raises))
'''

EXITS = """
import sys
sys.stderr.write("loading the model\\n")
sys.stderr.write("cannot open weights.bin: no such file\\n")
sys.exit(2)
"""

SLOW = '''
import time
from tavolo_bot import Bot, run


class Slow(Bot):
    """Answers every request too late."""

    def choose(self, turn):
        time.sleep(0.5)
        return turn.legal[0].id


if __name__ == "__main__":
    raise SystemExit(run(Slow))
'''

LOUD = """
import sys
sys.stdout.write("x" * 1_500_000 + "\\n")
sys.stdout.flush()
sys.stderr.write("my last words, after the logs were full\\n")
sys.exit(4)
"""


PLAYED_AS = Path(sys.executable).name
"""What ``tavolo play`` names a ``cmd:`` entry: its program's name."""


def bot(tmp_path: Path, name: str, code: str) -> str:
    """A ``cmd:`` entry running ``code`` as the script ``name``.py with this Python."""
    path = tmp_path / f"{name}.py"
    path.write_text(code, encoding="utf-8")
    return "cmd:" + shlex.join([sys.executable, str(path)])


def errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("error:")]


WHERE = re.compile(r"\(entry '([^']+)', seat (\d), game (\d+), deal (\d+)\)")
LOG = re.compile(r"; log (\S+/stderr\.log)")


def where(detail: str) -> tuple[str, int, int, int]:
    """(entry, seat, game, deal) as a fault detail names them."""
    found = WHERE.search(detail)
    assert found, detail
    return found[1], int(found[2]), int(found[3]), int(found[4])


def deals_started(game: list[dict[str, Any]], before: dict[str, Any]) -> int:
    """The number of the deal being played when ``before`` was written."""
    return max(line["deal"] for line in game[: game.index(before)] if line["type"] == "deal")


# -- tavolo play ----------------------------------------------------------------------------


def test_a_bot_that_raises_in_choose_is_named_with_its_traceback_and_log(tmp_path: Path) -> None:
    require_sandbox()
    record = tmp_path / "m.jsonl"
    result = tavolo(
        "play", bot(tmp_path, "raises", RAISES), "random", "--seed", "diag", "--deals", "2",
        "--quiet", "--record", record,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.stderr
    games = record_games(record)
    assert len(games) == 2
    for number, game in enumerate(games, 1):
        [forfeit] = [line for line in game if line["type"] == "forfeit"]
        assert forfeit["reason"] == "crash"
        detail = forfeit["detail"]
        # Who and where, as the record's own fields and lines say.
        seats = game[0]["seats"]
        assert where(detail) == (PLAYED_AS, forfeit["seat"], number, deals_started(game, forfeit))
        assert seats[forfeit["seat"]] == PLAYED_AS
        # Why: the exit, the log kept, and the end of its stderr (the bot's traceback).
        assert detail.startswith(f"the bot process ended (entry {PLAYED_AS!r}")
        assert "exit status 1" in detail
        log = Path(LOG.search(detail)[1])  # type: ignore[index]
        assert "ValueError: the bot's own bug" in log.read_text(encoding="utf-8")
        assert detail.endswith("ValueError: the bot's own bug, deal after deal")
    assert verify_lines(record.read_text(encoding="utf-8").splitlines(), str(record))

    out = result.stdout
    # Under each game: the fault, the log, and the last lines of the bot's stderr.
    faults = [line for line in out.splitlines() if line.strip().startswith("fault:")]
    assert len(faults) == 2
    for line in faults:
        assert f"crash: the bot process ended (entry {PLAYED_AS!r}, seat " in line
        assert Path(LOG.search(line)[1]).is_file()  # type: ignore[index]
    assert out.count("| ValueError: the bot's own bug, deal after deal") == 2
    assert "raise ValueError" in out  # the traceback's lines before its last
    kept = re.search(r"^bot logs: (\S+) \(kept: a bot faulted\)$", out, re.M)
    assert kept and Path(kept[1]).is_dir()
    try:
        assert all(Path(LOG.search(line)[1]).parent.parent == Path(kept[1]) for line in faults)  # type: ignore[index]
    finally:
        shutil.rmtree(kept[1])  # a temporary folder this test made the command keep

    [error] = errors(result.stderr)
    assert error.startswith(
        f"error: entry {PLAYED_AS!r} faulted in all 2 games it played; the last: "
    )
    assert f"crash: the bot process ended (entry {PLAYED_AS!r}, seat " in error
    assert ", game 2, deal " in error
    assert error.endswith("stderr ends: ValueError: the bot's own bug, deal after deal")
    assert LOG.search(error)


def test_never_connected_quotes_the_stderr_it_left(tmp_path: Path) -> None:
    require_sandbox()
    result = tavolo(
        "play", bot(tmp_path, "exits", EXITS), "random", "--seed", "nc", "--deals", "1",
        "--quiet", "--workdir", tmp_path / "logs",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert f"bot logs: {tmp_path / 'logs'}" in out.splitlines()
    faults = [line.strip() for line in out.splitlines() if line.strip().startswith("fault:")]
    assert len(faults) == 2
    for number, line in enumerate(faults, 1):
        assert line.startswith(f"fault: crash: never connected (entry {PLAYED_AS!r}, seat ")
        assert f", game {number}, deal 1): exit status 2; log {tmp_path / 'logs'}" in line
    # The stderr under each fault, never an empty "stderr ends:".
    assert out.count("| loading the model") == 2
    assert out.count("| cannot open weights.bin: no such file") == 2
    [error] = errors(result.stderr)
    assert error.endswith("; stderr ends: cannot open weights.bin: no such file")
    assert f"never connected (entry {PLAYED_AS!r}, seat " in error


def test_a_clean_match_keeps_no_temporary_logs(tmp_path: Path) -> None:
    result = tavolo("play", "random", "random", "--seed", "clean", "--deals", "1", "--quiet")
    assert result.exit_code == 0, result.output
    assert "fault:" not in result.stdout
    assert "bot logs:" not in result.stdout


# -- tavolo tournament run ------------------------------------------------------------------


def tournament_file(tmp_path: Path, entries: dict[str, str], extra: str = "") -> Path:
    path = tmp_path / "cup.toml"
    body = "".join(
        f"[[entry]]\nname = {json.dumps(n)}\nbot = {json.dumps(b)}\n" for n, b in entries.items()
    )
    path.write_text(
        f'name = "cup"\nseed = "cup-1"\n[game]\ndeals = 1\n[match]\ngames = 2\n{extra}\n{body}',
        encoding="utf-8",
    )
    return path


GAME_LINE = re.compile(
    r"^match (\d+) game (\d+): (\S+) vs (\S+): (1-0|0-1|1/2-1/2), points (\d+)-(\d+), (\w+)(.*)$"
)


def test_a_run_keeps_logs_beside_its_database_and_prints_each_game(tmp_path: Path) -> None:
    require_sandbox()
    path = tournament_file(
        tmp_path, {"raises": bot(tmp_path, "raises", RAISES), "good": "random", "other": "random"}
    )
    result = tavolo("tournament", "run", path)  # no --db, no --workdir
    # 'raises' crashes in each of its games: the run fails, after storing and showing all.
    assert result.exit_code == 1, result.output
    [error] = errors(result.stderr)
    assert error.startswith("error: entry 'raises' faulted in all 4 games it played; the last: ")
    logs = tmp_path / "cup.logs"
    assert stat.S_IMODE(logs.stat().st_mode) == 0o700
    assert f"bot logs: {logs}" in result.stdout.splitlines()
    # Not a terminal: one line per finished game, as fastchess prints them.
    lines = [GAME_LINE.match(line) for line in result.stdout.splitlines()]
    games = [m for m in lines if m]
    assert len(games) == 6
    with Store.open_for_reading(tmp_path / "cup.db") as store:
        stored = {(g.match_id, g.number): g for g in store.games()}
        texts = {(m, n): t for m, n, t in store.records()}
    assert {(int(m[1]), int(m[2])) for m in games} == set(stored)
    crashed = 0
    for m in games:
        game = stored[(int(m[1]), int(m[2]))]
        assert (m[3], m[4]) == game.sides
        assert m[8] == game.termination
        assert (int(m[6]), int(m[7])) == game.totals
        if game.termination != "crash":
            assert m[9] == ""
            continue
        crashed += 1
        # The fault on the same line: who, where, the log (kept, in cup.logs), its stderr.
        entry, seat, number, deal = where(m[9])
        assert (entry, number, seat) == ("raises", game.number, game.forfeit_seat)
        forfeit = next(
            json.loads(x) for x in texts[(game.match_id, game.number)].splitlines()
            if json.loads(x)["type"] == "forfeit"
        )  # fmt: skip
        assert forfeit["detail"].startswith(m[9].removeprefix(": ").split("; stderr ends:")[0])
        log = Path(LOG.search(m[9])[1])  # type: ignore[index]
        assert log.is_relative_to(logs) and "ValueError" in log.read_text(encoding="utf-8")
        assert m[9].endswith("stderr ends: ValueError: the bot's own bug, deal after deal")
        assert deal == 1
    assert crashed == 4


def test_an_entry_that_times_out_in_every_game_fails_the_run(tmp_path: Path) -> None:
    require_sandbox()
    path = tournament_file(
        tmp_path,
        {"slow": bot(tmp_path, "slow", SLOW), "good": "random"},
        extra="deadline_ms = 100\n",
    )
    db = tmp_path / "cup.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 1, result.output
    assert "2 games played now, 2 of 2 stored" in result.stdout
    # --quiet: no line per game, but the faulted ones still.
    timeouts = [line for line in result.stdout.splitlines() if GAME_LINE.match(line)]
    assert len(timeouts) == 2
    assert all("timeout: no answer to request " in line for line in timeouts)
    [error] = errors(result.stderr)
    assert error.startswith("error: entry 'slow' faulted in all 2 games it played; the last: ")
    assert "timeout: no answer to request " in error
    assert re.search(r"within 100 ms \(entry 'slow', seat \d, game \d, deal 1\)$", error)
    table = tavolo("tournament", "table", "--db", db)
    assert table.exit_code == 0 and "slow" in table.stdout  # every result is kept


@pytest.mark.parametrize("shards", ["1", "2"])
def test_the_logs_cap_cuts_logs_but_not_the_fault_line(tmp_path: Path, shards: str) -> None:
    require_sandbox()
    path = tournament_file(tmp_path, {"loud": bot(tmp_path, "loud", LOUD), "good": "random"})
    db = tmp_path / "cup.db"
    result = tavolo(
        "tournament", "run", path, "--db", db, "--quiet", "--logs-mb", "1", "--shards", shards
    )
    assert result.exit_code == 1, result.output
    logs = tmp_path / "cup.logs"
    files = [f for f in logs.rglob("*.log")]
    kept = sum(f.stat().st_size for f in files)
    notes = [f for f in files if "reached their total cap, 1 MB" in f.read_text(errors="replace")]
    assert notes, "a log was cut at the cap, with a line saying so"
    assert kept <= 2**20 + 200 * len(notes)
    # The one match plays on one shard, whose bots borrow the whole cap from the head, not
    # half of it: the shards share one cap.
    assert kept > 0.9 * 2**20
    # The stderr written after the cap is in no log, yet every fault line quotes it.
    assert not any("my last words" in f.read_text(errors="replace") for f in files)
    [error] = errors(result.stderr)
    assert error.endswith("stderr ends: my last words, after the logs were full")
    # A second run finds the folder at its cap: new logs are cut from the start.
    again = tavolo(
        "tournament", "run", path, "--db", db, "--quiet", "--logs-mb", "1", "--shards", shards
    )
    assert "take their --logs-mb (1 MB) already" in again.stderr


def test_play_caps_its_logs_in_total(tmp_path: Path) -> None:
    """A bot that writes 1.5 MB and crashes, started again before every game with fresh
    log files: ``tavolo play``'s bots' logs stay within ``--logs-mb`` all the same."""
    require_sandbox()
    loud = bot(tmp_path, "loud", LOUD)
    logs = tmp_path / "logs"
    result = tavolo(
        "play", loud, "random", "--seed", "s", "--deals", "1", "--sets", "2",
        "--logs-mb", "1", "--workdir", logs, "--quiet",
    )  # fmt: skip
    files = list(logs.rglob("*.log"))
    # Four processes wrote 1.5 MB each: uncapped, 6 MB.
    assert len([f for f in files if f.name == "stdout.log"]) >= 4
    kept = sum(f.stat().st_size for f in files)
    assert kept <= 2**20 + 200 * len(files), kept
    assert any("reached their total cap, 1 MB" in f.read_text(errors="replace") for f in files)
    assert "my last words, after the logs were full" in result.output
    bad = tavolo("play", "random", "random", "--seed", "s", "--logs-mb", "0")
    assert_one_error(bad, "--logs-mb must be 1 or more, got 0")
