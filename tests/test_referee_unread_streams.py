"""A bot that never reads its stream holds nothing: the write counts against its clock.

``tests/bots/deaf.py`` says Hello with a tiny HTTP/2 receive window and never reads again,
so the referee's writes to it block in flow control. Before, ``send_request`` waited on
the write without limit, before the decision's clock started, and the match (with it a
tournament) never ended. Real referee on loopback, real bot processes in the sandbox.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from referee.engine.registry import preset
from referee.entries import parse_entry
from referee.match.config import Limits, MatchConfig
from referee.match.faults import FaultPolicy
from referee.match.match import Match
from referee.match.results import MatchResult
from referee.service.server import start_referee
from tests.bots.harness import run

DEAF = Path(__file__).resolve().parent / "bots" / "deaf.py"


async def _play(tmp_path: Path, policy: FaultPolicy) -> tuple[MatchResult, list[str]]:
    referee = await start_referee("127.0.0.1:0")
    record = tmp_path / "match.jsonl"
    limits = Limits(deadline_ms=200, connect_timeout=20, grace=1, on_fault=policy)
    deaf = parse_entry(f"cmd:{sys.executable} {DEAF}")
    config = MatchConfig(preset("tressette"), "deaf", (deaf, parse_entry("random")), 3, 1, limits)
    try:
        with record.open("w", encoding="utf-8") as stream:
            match = Match(referee, config, record=stream, workdir=tmp_path / "work")
            result = await asyncio.wait_for(match.run(), 90)
    finally:
        await referee.stop(0.5)
    return result, record.read_text(encoding="utf-8").splitlines()


def test_a_bot_that_never_reads_forfeits_on_its_clock(tmp_path: Path) -> None:
    result, lines = run(_play(tmp_path, FaultPolicy.FORFEIT), timeout=120)
    deaf, other = result.stats
    assert [o.termination.value for o in result.outcomes] == ["timeout", "timeout"]
    assert deaf.timeouts == 2 and deaf.losses == 2 and other.wins == 2, result.stats
    # Each game has a deaf process of its own; whether its window fills before its first
    # request or the request simply goes unanswered, its clock ends it.
    unread = [i for i in result.incidents if i[1] == "not_reading"]
    assert unread and "the bot does not read its stream" in unread[0][2], result.incidents
    forfeits = [x for x in lines if '"type":"forfeit"' in x]
    assert len(forfeits) == 2 and any("the bot did not read its stream" in x for x in forfeits)


def test_under_the_random_policy_the_match_plays_out(tmp_path: Path) -> None:
    """The referee plays for the deaf seat; its stream is gone, so each later request
    waits out the grace period (1 s here), and every deal is played to its end."""
    result, _ = run(_play(tmp_path, FaultPolicy.RANDOM), timeout=120)
    assert sum(o.deals for o in result.outcomes) >= 2
    assert any(i[1] == "not_reading" for i in result.incidents), result.incidents
