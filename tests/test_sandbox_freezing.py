"""Only the bot on move runs: every other sandboxed bot of the table is stopped.

The hostile bot (``ponder``) says every 20 ms from a thread of its own that it runs, and
says when each of its decisions was asked and answered. Frozen, no heartbeat falls
outside its own decisions (give or take the moments the referee takes to freeze it once
the answer is in); with ``ponder`` on, some do. Real sandboxes, real referee.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.sandboxing import require_sandbox
from tests.test_sandbox import LIMITS, THINKER, _manifest, hostile, play

SLACK = 0.05
"""Seconds around a decision a heartbeat may fall in: from the answer's write to the stop."""


@pytest.fixture(autouse=True)
def _sandbox_needed() -> None:
    require_sandbox()


def _outside(reports: list[dict[str, Any]]) -> tuple[int, int]:
    """Heartbeats in all, and those of a process that fell outside its own decisions."""
    beats = outside = 0
    for process in reports:
        lines = reports[process]  # type: ignore[index]
        windows = [(r["asked"] - SLACK, r["t"] + SLACK) for r in lines if r["attack"] == "decision"]
        first = min((r["asked"] for r in lines if r["attack"] == "decision"), default=None)
        for r in lines:
            if r["attack"] != "heartbeat" or first is None or r["t"] < first:
                continue  # before its first request it may run: it is starting
            beats += 1
            outside += not any(start <= r["t"] <= end for start, end in windows)
    return beats, outside


def _play(tmp_path: Path, ponder: bool) -> tuple[int, int]:
    limits = dataclasses.replace(LIMITS, ponder=ponder)
    # The opponent thinks 100 ms a decision, so the time off move is long enough that a
    # pondering bot's heartbeats fall outside its windows many times, not by luck.
    thinker = _manifest(tmp_path / "thinker" / "thinker.toml", "thinker",
                        [sys.executable, str(THINKER), "--think-ms", "100"])  # fmt: skip
    played = play((hostile(tmp_path / "bot", "ponder"), thinker), tmp_path,
                  deals=2, limits=limits)  # fmt: skip
    played.assert_played_out()
    return _outside(played.reports)  # type: ignore[arg-type]


def test_a_bot_runs_only_on_its_own_decisions(tmp_path: Path) -> None:
    beats, outside = _play(tmp_path / "frozen", ponder=False)
    assert beats >= 20 and outside == 0, (beats, outside)


def test_with_ponder_a_bot_runs_on_the_others_time(tmp_path: Path) -> None:
    beats, outside = _play(tmp_path / "ponder", ponder=True)
    assert outside >= 50, (beats, outside)
