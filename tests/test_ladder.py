"""``tavolo ladder``: real bot processes over gRPC, Elo and win rates, one-line errors."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from referee.entries import BUILT_IN_BOTS
from tests.helpers import record_games
from tournaments.cli.main import app
from tournaments.ladder import DEFAULT_RUNGS, LadderError, check_rungs, wilson

RUNNER = CliRunner()
ENTRY = f"cmd:{sys.executable} -m tavolo_bot.bots.random"
"""A bot of our own, not a rung: the random bot run as a command (named ``python…``)."""
ARGS = ["--rungs", "random,heuristic", "--sets", "2", "--deals", "1", "--quiet"]


def test_wilson_worked_by_hand() -> None:
    # z = 2, 3 of 4: centre 0.75 + 4/8 = 1.25, spread 2·sqrt(0.75·0.25/4 + 4/64)
    # = 2·sqrt(7/64) = sqrt(7)/4, scale 1 + 4/4 = 2: (1.25 ∓ sqrt(7)/4) / 2.
    low, high = wilson(3, 4, z=2.0)
    assert low == pytest.approx(0.625 - math.sqrt(7) / 8, abs=1e-12)
    assert high == pytest.approx(0.625 + math.sqrt(7) / 8, abs=1e-12)
    # 0 of n: the low end is 0 and the high end z²/(n + z²); z = 2, n = 12: 4/16.
    assert wilson(0, 12, z=2.0) == (0.0, pytest.approx(0.25, abs=1e-12))
    assert wilson(12, 12, z=2.0) == (pytest.approx(0.75, abs=1e-12), 1.0)
    # The default is 95%: 0 of 10 reaches 1.96²/(10 + 1.96²).
    assert wilson(0, 10)[1] == pytest.approx(3.8415 / 13.8415, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes must be 0 to 4"):
        wilson(5, 4)


def _records(folder: Path) -> list[list[dict[str, Any]]]:
    """Every game of every record file in ``folder``, as its lines."""
    return [game for path in sorted(folder.glob("*.jsonl")) for game in record_games(path)]


def test_the_ladder_rates_an_entry_against_the_rungs(tmp_path: Path) -> None:
    records = tmp_path / "records"
    text = RUNNER.invoke(app, ["ladder", ENTRY, *ARGS])
    assert text.exit_code == 0, text.output
    as_json = RUNNER.invoke(app, ["ladder", ENTRY, *ARGS, "--json", "--records", str(records)])
    assert as_json.exit_code == 0, as_json.output
    out = json.loads(as_json.stdout)
    rows = {r["name"]: r for r in out["entries"]}
    entry = next(name for name in rows if name.startswith("python"))
    assert set(rows) == {"random", "heuristic", entry}
    assert out["ladder"]["rungs"] == ["random", "heuristic"]
    assert out["ladder"]["anchor"] == "random" and rows["random"]["elo"] == 0.0
    # Three matches (the entry against each rung, the rungs against each other) of 2 sets
    # of 2 games.
    assert out["ladder"]["games"] == 12
    assert set(rows[entry]["vs"]) == {"random", "heuristic"}
    assert set(rows["random"]["vs"]) == {"heuristic"} and set(rows["heuristic"]["vs"]) == {"random"}

    lines = text.stdout.splitlines()
    for name, row in rows.items():
        # Every participant has its line with its Elo, its interval and a cell per rung it met.
        line = next(x for x in lines if x.startswith(name))
        assert f" {row['elo']:.0f} " in line
        assert f"[{row['elo_low']:.0f}, {row['elo_high']:.0f}]" in line
        for cell in row["vs"].values():
            assert f"{cell['wins']}/{cell['games']} {cell['win_rate']:.2f} " in line
            assert f"[{cell['low']:.2f}, {cell['high']:.2f}]" in line
            assert (cell["low"], cell["high"]) == pytest.approx(
                wilson(cell["wins"], cell["games"]), abs=1e-4
            )

    # The win counts are the records' results: every game of the entry's record files.
    games = _records(records)
    assert len(games) == 12
    won: dict[tuple[str, str], int] = {}
    for game in games:
        seats = [str(s) for s in game[0]["seats"]]  # type: ignore[union-attr]
        result = game[-1]
        assert result["type"] == "result"
        names = {s for s in seats}
        winner = result["winner"]
        if winner is None:
            continue
        who = seats[int(str(winner))]  # side w holds seats w and w + 2
        other = next(n for n in names if n != who)
        won[(who, other)] = won.get((who, other), 0) + 1
    for name, row in rows.items():
        for rung, cell in row["vs"].items():
            assert cell["wins"] == won.get((name, rung), 0), (name, rung)


def test_the_ladder_seats_a_rungs_copies_in_a_three_player_game() -> None:
    result = RUNNER.invoke(
        app,
        ["ladder", ENTRY, "--game", "tressette-a-tre", "--rungs", "heuristic", "--sets", "1",
         "--deals", "1", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    rows = {r["name"]: r for r in out["entries"]}
    entry = next(name for name in rows if name.startswith("python"))
    # One match, six seatings of the entry and two heuristic processes.
    assert out["ladder"]["games"] == 6
    assert rows[entry]["vs"]["heuristic"]["games"] == 6
    assert rows[entry]["games"] == rows["heuristic"]["games"] == 6


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["random", "--rungs", "random,champion"], "rung 'champion' is not a built-in bot"),
        (["random", "--rungs", "random,random"], "rung 'random' is given twice"),
        (["cmd:no-such-program-xyz", "--rungs", "random"], "'no-such-program-xyz' not found"),
        (["nothing", "--rungs", "random"], "unknown entry 'nothing'"),
        (["--rungs", "random"], "nothing to play"),
        (["random", "--rungs", "random", "--sets", "0"], "--sets must be 1 or more"),
        (["random", "--game", "scopa"], "scopa"),
    ],
)
def test_bad_ladders_fail_in_one_line(args: list[str], message: str) -> None:
    _fails_in_one_line(["ladder", *args], message)


def test_a_default_rung_that_is_not_built_in_is_named() -> None:
    assert DEFAULT_RUNGS == ("random", "heuristic", "pimc")
    with pytest.raises(LadderError) as caught:
        check_rungs(DEFAULT_RUNGS, built_in=("random", "heuristic"))
    assert str(caught.value) == (
        "rung 'pimc' is not built into this tavolo (its built-in bots: random, heuristic); "
        "leave it out: --rungs random,heuristic"
    )
    if "pimc" not in BUILT_IN_BOTS:
        _fails_in_one_line(["ladder", "random"], str(caught.value))
    else:
        assert check_rungs(DEFAULT_RUNGS) == DEFAULT_RUNGS


def _fails_in_one_line(args: list[str], message: str) -> None:
    result = RUNNER.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
