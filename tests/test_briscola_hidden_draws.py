"""Briscola's draws are face down: a hostile entrant in the real sandbox, over real gRPC,
looks for a card another seat drew in every event and observation it gets, and finds none,
for two players and for four. In tressette a due, where draws are shown to both, the same
bot finds them at once: the spy can see what it looks for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.sandboxing import require_sandbox
from tests.test_cli import run

SPY = Path(__file__).resolve().parent / "bots" / "briscola_spy.py"


def _play(game: str) -> subprocess.CompletedProcess[str]:
    require_sandbox()
    done = run(
        "play", f"cmd:{sys.executable} {SPY}", "random", "--game", game, "--seed", "spy",
        "--sets", "1", "--deals", "2",
    )  # fmt: skip
    return done


@pytest.mark.parametrize("game", ["briscola", "briscola-a-quattro"])
def test_no_seat_sees_anothers_draw(game: str) -> None:
    done = _play(game)
    assert done.returncode == 0 and "LEAK" not in done.stderr, done.stderr
    spy_row = next(line for line in done.stdout.splitlines() if line.startswith("python "))
    assert spy_row.split()[-1] == "0/0/0", done.stdout  # played every game, no crash


def test_the_spy_finds_draws_where_they_are_shown() -> None:
    done = _play("tressette-a-due")
    assert "LEAK" in done.stderr and "card_drawn" in done.stderr, done.stderr
