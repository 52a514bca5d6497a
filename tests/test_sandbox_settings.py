"""``sandbox = "bwrap" | "off"``: who refuses, who warns, and what the records and tables say.

A machine without bubblewrap is made by pointing ``TAVOLO_BWRAP`` at a file that does not
exist; everything else is real (bots, referee, databases).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.records import RecordError, verify_lines
from referee.sandbox.probe import sandbox_problem
from tests.sandboxing import as_a_normal_user, require_sandbox
from tests.test_cli import assert_one_error, tavolo

COMMAND = f"cmd:{sys.executable} -m tavolo_bot.bots.random"


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TAVOLO_BWRAP", "/nonexistent/bwrap")
    sandbox_problem.cache_clear()
    yield
    monkeypatch.delenv("TAVOLO_BWRAP")
    sandbox_problem.cache_clear()


def tournament(tmp_path: Path, second: str, match: str = "") -> Path:
    path = tmp_path / "t.toml"
    path.write_text(
        f'name = "t"\n[game]\ndeals = 1\n[match]\ngames = 2\n{match}'
        f'[[entry]]\nname = "a"\nbot = "random"\n[[entry]]\nname = "b"\nbot = "{second}"\n',
        encoding="utf-8",
    )
    return path


def test_a_tournament_refuses_a_command_bot_without_a_sandbox(
    tmp_path: Path, no_bwrap: None
) -> None:
    result = tavolo("tournament", "run", tournament(tmp_path, COMMAND), "--db", tmp_path / "t.db")
    line = assert_one_error(result, "entry 'b' must run in a sandbox", "apt-get install bubblewrap")
    assert 'sandbox = "off"' in line
    assert not (tmp_path / "t.db").exists()


def test_built_in_bots_run_unconfined_without_a_sandbox_and_the_table_says_so(
    tmp_path: Path, no_bwrap: None
) -> None:
    db = tmp_path / "t.db"
    result = tavolo("tournament", "run", tournament(tmp_path, "random"), "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "'a', 'b' run unconfined" in warnings[0], result.stderr
    table = tavolo("tournament", "table", "--db", db)
    assert table.stdout.rstrip().endswith("sandbox: a off, b off")
    as_json = json.loads(tavolo("tournament", "table", "--db", db, "--format", "json").stdout)
    assert {e["name"]: e["sandbox"] for e in as_json["entries"]} == {"a": "off", "b": "off"}


def test_off_on_purpose_is_no_refusal(tmp_path: Path, no_bwrap: None) -> None:
    path = tournament(tmp_path, COMMAND, 'sandbox = "off"\n')
    result = tavolo("tournament", "run", path, "--db", tmp_path / "t.db", "--quiet")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr


def test_play_and_conformance_warn_in_one_line_instead(tmp_path: Path, no_bwrap: None) -> None:
    record = tmp_path / "m.jsonl"
    args = ["play", "random", COMMAND, "--seed", "s", "--deals", "1", "--quiet"]
    result = tavolo(*args, "--record", record)
    assert result.exit_code == 0, result.output
    name = Path(sys.executable).name  # a cmd: entry is named after its program
    assert result.stderr.splitlines() == [
        f"warning: 'random', '{name}' run unconfined: TAVOLO_BWRAP=/nonexistent/bwrap is not "
        "an executable bubblewrap: install bubblewrap (Debian or Ubuntu: apt-get install "
        "bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)"
    ]
    header = json.loads(record.read_text(encoding="utf-8").splitlines()[0])
    assert header["sandbox"] == ["off"] * 4
    checked = tavolo("conformance", "--game", "tressette", "--", sys.executable, "-m",
                     "tavolo_bot.bots.random")  # fmt: skip
    assert checked.exit_code == 0, checked.output
    assert checked.stderr.startswith("warning: the bot runs unconfined: TAVOLO_BWRAP=")


def test_a_manifest_cannot_turn_the_tournament_sandbox_off(tmp_path: Path) -> None:
    bot = tmp_path / "bot" / "loose.toml"
    bot.parent.mkdir()
    bot.write_text(
        f'name = "loose"\ncommand = ["{sys.executable}", "-m", "tavolo_bot.bots.random"]\n'
        'sandbox = "off"\n',
        encoding="utf-8",
    )
    path = tournament(tmp_path, str(bot))
    assert_one_error(
        tavolo("tournament", "run", path, "--db", tmp_path / "t.db"),
        f"{path}:11: key 'entry[2].bot'",
        'its manifest asks for sandbox = "off"',
    )
    bad = tournament(tmp_path, "random", 'sandbox = "maybe"\n')
    assert_one_error(
        tavolo("tournament", "run", bad, "--db", tmp_path / "u.db"),
        f"{bad}:6: key 'match.sandbox'",
        "must be 'bwrap', 'off', got 'maybe'",
    )


def test_the_record_says_what_each_seat_ran_under(tmp_path: Path) -> None:
    mode = require_sandbox()
    record = tmp_path / "m.jsonl"
    result = tavolo(
        "play", "random", "heuristic", "--seed", "s", "--deals", "1", "--quiet", "--record", record
    )
    assert result.exit_code == 0, result.output
    lines = record.read_text(encoding="utf-8").splitlines()
    headers = [json.loads(x) for x in lines if x.startswith('{"type":"game"')]
    assert [h["sandbox"] for h in headers] == [[mode] * 4, [mode] * 4]
    verify_lines(lines)
    # The field is checked like any other: tampered, it is one error naming the line.
    tampered = lines[0].replace(f'"sandbox":["{mode}",', '"sandbox":[7,')
    with pytest.raises(RecordError, match=r"<record>:1: field 'sandbox' must be 4 words"):
        verify_lines([tampered, *lines[1:]])


NOT_ROOT = (
    "warning: the referee is not root, so its sandboxes have no cgroups: their memory is "
    "capped per process, not per sandbox, and their CPU share rests on the kernel's "
    "autogroup (docs/security.md, 'What stays outside')"
)


def test_a_referee_that_is_not_root_says_its_sandboxes_have_no_cgroups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_sandbox()
    args = ["--seed", "s", "--deals", "1", "--quiet"]
    if os.geteuid() == 0:
        as_root = tavolo("play", "random", COMMAND, *args)
        assert as_root.exit_code == 0 and as_root.stderr == "", as_root.output
    # The referee then makes no cgroups, as a user's would.
    with as_a_normal_user(monkeypatch):
        result = tavolo("play", "random", COMMAND, *args)
        assert result.exit_code == 0, result.output
        assert result.stderr.splitlines() == [NOT_ROOT]
        # Built-in bots alone are the harness's own code: nothing to warn of.
        built_in = tavolo("play", "random", "heuristic", *args)
        assert built_in.exit_code == 0 and built_in.stderr == "", built_in.output
        file = tournament(tmp_path, COMMAND)
        run = tavolo("tournament", "run", file, "--db", tmp_path / "t.db", "--quiet")
        assert run.exit_code == 0, run.output
        assert NOT_ROOT in run.stderr.splitlines(), run.stderr
