"""The ``openspiel:ismcts`` entry: OpenSpiel's IS-MCTS as a bot process over the protocol.

Real matches: ``tavolo play`` starts the bot in the bubblewrap sandbox, where it sees only
its stream, and the referee checks every action it sends.
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")

from referee import entries
from referee.bots.pimc import KnobError
from referee.engine.registry import presets
from referee.entries import EntryError, parse_entry, program_files
from referee.records import without_think_times
from referee.research.dealt_game import DealtGame
from referee.research.openspiel_bot import knobs
from referee.research.resample import game_from_view
from tests.sandboxing import require_sandbox
from tests.test_cli import assert_one_error, console_script, run, runner
from tournaments.cli.main import app

ROOT = Path(__file__).resolve().parent.parent


def faults(record: Path) -> list[str]:
    """The record's lines that say an entry did something wrong."""
    lines = record.read_text(encoding="utf-8").splitlines()
    return [x for x in lines if json.loads(x)["type"] in ("rejected", "incident", "forfeit")]


@pytest.mark.parametrize("game", ["tressette", "briscola"])
def test_ismcts_plays_a_sandboxed_match_against_random(tmp_path: Path, game: str) -> None:
    """The entry at its default knobs (400 ms a decision): no timeout, no illegal action,
    no crash, and a record that verifies."""
    sandbox = require_sandbox()
    record = tmp_path / "match.jsonl"
    done = run(
        "play", "openspiel:ismcts", "random", "--game", game, "--deals", "1",
        "--seed", f"ismcts-{game}", "--sandbox", sandbox, "--record", record,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("ismcts "))
    assert row.split()[-1] == "0/0/0", row
    assert faults(record) == []
    verified = run("verify", record)
    assert verified.returncode == 0, verified.stderr


def manifest(folder: Path, *knob_args: str) -> Path:
    """A manifest of the bot with ``knob_args``, run by this Python."""
    command = [sys.executable, "-m", "referee.research.openspiel_bot", *knob_args]
    path = folder / "ismcts.toml"
    path.write_text(f'name = "ismcts-small"\ncommand = {json.dumps(command)}\n', encoding="utf-8")
    return path


def test_without_a_clock_the_same_seed_gives_the_same_record(tmp_path: Path) -> None:
    """Clock-free (``--ms-per-decision 0``), two sandboxed matches with other deadlines
    play the same actions."""
    sandbox = require_sandbox()
    bot = manifest(tmp_path, "--simulations", "24", "--ms-per-decision", "0")
    records = []
    for deadline in ("2000", "5000"):
        record = tmp_path / f"match-{deadline}.jsonl"
        done = run(
            "play", bot, "random", "--game", "briscola", "--deals", "1", "--seed", "same",
            "--sandbox", sandbox, "--deadline-ms", deadline, "--record", record,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert faults(record) == []
        records.append(without_think_times(record.read_text(encoding="utf-8").splitlines()))
    assert records[0] == records[1]
    assert any('"type":"play"' in line for line in records[0])


def test_knobs_come_from_the_arguments_then_the_environment() -> None:
    assert knobs([], {}) == (1000, 400)
    assert knobs([], {"TAVOLO_ISMCTS_SIMULATIONS": "50"}) == (50, 400)
    assert knobs(["--simulations=9", "--ms-per-decision", "0"], {}) == (9, 0)
    for argv, message in (
        (["--simulations", "1"], "simulations must be a whole number from 2, not '1'"),
        (["--worlds", "3"], "unknown argument '--worlds'; openspiel:ismcts takes --simulations"),
        (["--ms-per-decision"], "--ms-per-decision needs a value"),
    ):
        with pytest.raises(KnobError, match=message):
            knobs(argv, {})


def test_a_bad_knob_stops_the_process_with_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "referee.research.openspiel_bot", "--simulations", "x"],
        capture_output=True,
        text=True,
        env={**os.environ, "TAVOLO_REFEREE": "localhost:1", "TAVOLO_TICKET": "t"},
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == "openspiel:ismcts: simulations must be a whole number from 2, not 'x'\n"


def test_the_entry_runs_the_referees_module_and_may_read_it() -> None:
    entry = parse_entry("openspiel:ismcts")
    assert entry.name == "ismcts" and entry.built_in
    assert entry.command == (sys.executable, "-m", "referee.research.openspiel_bot")
    assert entries.package_folder("referee") in entry.read_only
    assert entries.built_in_bot(entry) == "openspiel:ismcts"
    # What it plays by: the research package's game and worlds as well as pimc's parts.
    files = program_files(entry)
    assert any(f.endswith("referee/research/resample.py") for f in files)
    assert any(f.endswith("referee/search/tressette_worlds.py") for f in files)


def test_without_openspiel_the_entry_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = entries.importlib.util.find_spec
    monkeypatch.setattr(
        entries.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "pyspiel" else real(name, *a),
    )
    with pytest.raises(EntryError, match=r"needs OpenSpiel.*pip install 'tavolo\[research\]'"):
        parse_entry("openspiel:ismcts")
    result = runner.invoke(app, ["play", "openspiel:ismcts", "random", "--seed", "s"])
    assert_one_error(result, "openspiel:ismcts", "pip install 'tavolo[research]'")


@pytest.mark.parametrize("name", sorted(presets()))
def test_a_game_drawn_from_a_view_shows_the_seat_that_view(name: str) -> None:
    """At every decision of random one-deal games the drawn game has the seat to act,
    its observation and its legal actions."""
    rules = presets()[name]
    rng = random.Random(name)
    for _ in range(2):
        table = DealtGame(rules, 1)
        while not table.is_terminal():
            if table.is_chance():
                table.apply(rng.choice(table.chance_outcomes()))
                continue
            seat = table.to_act()
            assert seat is not None and table.game is not None
            drawn = game_from_view(rules, table.game.observation(seat), rng)
            assert drawn.to_act() == seat and drawn.game is not None
            assert drawn.game.observation(seat) == table.game.observation(seat)
            assert drawn.legal_actions() == table.legal_actions()
            table.apply(rng.choice(table.legal_actions()))


def test_the_research_docs_ladder_runs_with_one_set(tmp_path: Path) -> None:
    """docs/research.md's command, "IS-MCTS against pimc", with ``--sets 1``: IS-MCTS
    meets random and pimc over real gRPC in the sandbox, every game is counted, and
    nobody faults."""
    require_sandbox()
    text = (ROOT / "docs" / "research.md").read_text(encoding="utf-8")
    section = text.split("### IS-MCTS against pimc", 1)[1].split("\n### ", 1)[0]
    (command,) = re.findall(r"```sh\n(.*?)\n```", section, flags=re.S)
    argv = shlex.split(command)
    assert argv[:3] == ["tavolo", "ladder", "openspiel:ismcts"]
    argv[argv.index("--sets") + 1] = "1"
    done = subprocess.run(
        [console_script(), *argv[1:], "--json", "--quiet"],
        capture_output=True, text=True, timeout=900, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)
    assert table["ladder"]["rungs"] == ["random", "pimc"]
    assert table["ladder"]["games"] == 6  # three meetings of one set: two games each
    rows = {row["name"]: row for row in table["entries"]}
    assert set(rows) == {"ismcts", "random", "pimc"}
    ismcts = rows["ismcts"]
    assert ismcts["bot"] == "openspiel:ismcts" and not ismcts["rung"]
    assert {rung: cell["games"] for rung, cell in ismcts["vs"].items()} == {
        "random": 2,
        "pimc": 2,
    }
    for row in rows.values():
        assert (row["timeouts"], row["illegal"], row["crashes"]) == (0, 0, 0), row
