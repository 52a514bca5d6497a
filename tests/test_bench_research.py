"""``tavolo bench research`` through the real CLI: every environment is timed, beside
RLCard's games, and the ratio it prints is the figures' (no speed is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TAVOLO = Path(sys.executable).with_name("tavolo")


def test_the_research_bench_times_every_environment_and_rlcards() -> None:
    done = subprocess.run(
        [str(TAVOLO), "bench", "research", "--seconds", "0.2", "--rounds", "1", "--json"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    rates = figures["steps_per_second"]
    names = {"pettingzoo tressette (raw)", "pettingzoo tressette (wrapped)",
             "gymnasium tressette seat", "pettingzoo tressette, zero tensor (floor)",
             "pettingzoo, no game (ceiling)", "rlcard uno", "rlcard doudizhu",
             "rlcard limit-holdem", "rlcard leduc-holdem"}  # fmt: skip
    assert names <= set(rates) and all(rate > 0 for rate in rates.values())
    fastest = max(v for k, v in rates.items() if k.startswith("rlcard"))
    # The rates are printed rounded to a step: the ratio agrees with them to its 2 decimals.
    assert abs(figures["ratio"] - rates["pettingzoo tressette (raw)"] / fastest) <= 0.011
    assert abs(figures["ceiling"] - rates["pettingzoo, no game (ceiling)"] / fastest) <= 0.011
    assert figures["goal"] == 3.0 and figures["export_rows_per_second"] > 0
    assert rates["openspiel tressette apply_action"] > 0


def test_a_bad_game_is_one_line() -> None:
    done = subprocess.run(
        [str(TAVOLO), "bench", "research", "--game", "scopa"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith("error: unknown game 'scopa'")
