"""A bot cannot exhaust the referee's descriptors through its own socket.

The hostile bot (``connections``) opens 2,000 connections to the Unix socket the referee
gave it and holds them. Before, each one cost the referee a descriptor: a bot took the
referee to EMFILE in two seconds, its opponent forfeited, and a tournament stopped. Now
a slot's socket keeps one connection, and gRPC core closes the others at once.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from referee.entries import parse_entry
from referee.match.results import MatchResult
from tests.sandboxing import require_sandbox
from tests.test_sandbox import hostile, play


@pytest.fixture(autouse=True)
def _sandbox_needed() -> None:
    require_sandbox()


def _descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_bot_opening_thousands_of_connections_costs_the_referee_none(tmp_path: Path) -> None:
    counts: list[int] = []

    async def watch(task: asyncio.Future[MatchResult]) -> None:
        while not task.done():
            counts.append(_descriptors())
            await asyncio.sleep(0.02)

    before = _descriptors()
    entry = hostile(tmp_path / "bot", "connections")
    played = play((entry, parse_entry("random")), tmp_path, during=watch)
    played.assert_played_out()
    reports = [r for r in played.all_reports() if r["attack"] == "connections"]
    assert len(reports) == 4, reports  # two seats, a process a game, two games
    for r in reports:
        # Its SDK's own connection is the one kept; every other is closed at once.
        assert r["kept"] <= 1, r
    # The referee's own descriptors, in this process: a match's worth, not thousands.
    assert counts and max(counts) - before < 200, (before, max(counts))
