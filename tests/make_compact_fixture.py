"""Regenerate the compact-observation fixture in ``tests/fixtures/compact/``.

Run ``.venv/bin/python -m tests.make_compact_fixture`` after a change meant to alter
observations, then review the diff. Each case is a seeded match played through a real
referee over gRPC twice, by raw streams that choose the same actions both times: once
with every stream asking for compact observations, once with none asking. Each line of
a case's file pairs what the two streams received for the same request (the format is
in ``tests/fixtures/compact/README.md``). ``tests/test_compact_observations.py`` plays
the cases again and compares.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
import grpc.aio

from referee.engine.registry import preset
from referee.engine.rules import Rules
from referee.entries import Entry
from referee.match.config import Limits, MatchConfig
from referee.match.match import Match
from referee.service.server import Referee, start_referee
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc

FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures" / "compact"
LIMITS = Limits(deadline_ms=10_000, connect_timeout=20, grace=1.0)
"""Generous: a timeout would change what is played."""


@dataclass(frozen=True)
class Case:
    """One seeded match of remote entries, played by raw streams."""

    game: str
    seed: str
    deals: int

    @property
    def rules(self) -> Rules:
        return preset(self.game)

    @property
    def path(self) -> Path:
        return FIXTURE_DIR / f"{self.game}.jsonl"


CASES = (
    Case("tressette", "compact-1-1", 2),
    Case("tressette-a-due", "compact-2", 2),
    Case("tressette-a-tre", "compact-3", 1),
    Case("calabresella", "compact-4", 1),
)


@dataclass(frozen=True)
class Received:
    """One request as a stream received it."""

    slot: int
    request_id: int
    observation: pb.Observation
    legal: tuple[int, ...]


def choose(slot: int, request: pb.DecisionRequest) -> int:
    """The same action for the same request on every run: a declaration when one is
    offered (so that games have some), else a seeded pick, signals included."""
    legal = request.legal_actions
    declares = [a.id for a in legal if a.kind == pb.ACTION_KIND_DECLARE]
    if declares:
        return declares[0]
    return random.Random(f"{slot}/{request.request_id}").choice([a.id for a in legal])


async def raw_stream(address: str, ticket: str, *, compact: bool, out: list[Received]) -> None:
    """Play one slot on its own stream until the referee ends it, noting every request."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = pb_grpc.RefereeServiceStub(channel).Play()
        hello = pb.Hello(ticket=ticket, protocol_version=1, compact_observations=compact)
        await call.write(pb.PlayRequest(hello=hello))
        slot = -1
        while (response := await call.read()) is not grpc.aio.EOF:
            assert isinstance(response, pb.PlayResponse)
            for event in response.events:
                if event.HasField("welcome"):
                    slot = event.welcome.slot
            if not response.HasField("request"):
                if any(e.HasField("match_over") for e in response.events):
                    break
                continue
            request = response.request
            legal = tuple(a.id for a in request.legal_actions)
            out.append(Received(slot, request.request_id, request.observation, legal))
            decision = pb.Decision(request_id=request.request_id, action_id=choose(slot, request))
            await call.write(pb.PlayRequest(decision=decision))
        await call.done_writing()


async def play_raw(referee: Referee, case: Case, compact: Sequence[bool]) -> list[Received]:
    """Play ``case`` on ``referee``; slot k's stream asks for compact observations if
    ``compact[k]``. Every request, in the order the referee sent them."""
    tickets: list[str] = []
    remote = Entry("remote", remote=True)
    rules = case.rules
    config = MatchConfig(rules, case.seed, (remote,) * rules.sides, deals=case.deals, limits=LIMITS)
    match = Match(referee, config, on_ticket=lambda label, ticket: tickets.append(ticket))
    task = asyncio.create_task(match.run())
    slots = rules.sides * (2 if rules.partnerships else 1)
    while len(tickets) < slots:
        if task.done():
            task.result()
            raise RuntimeError("the match ended before it handed out its tickets")
        await asyncio.sleep(0.01)
    out: list[Received] = []
    await asyncio.gather(
        *(
            raw_stream(referee.address, t, compact=compact[k], out=out)
            for k, t in enumerate(tickets)
        )
    )
    result = await task
    ends = {o.termination.value for o in result.outcomes}
    if not ends <= {"deals_played", "target_reached"}:
        raise RuntimeError(f"{case.game}: a game ended by {ends}")
    return sorted(out, key=lambda r: r.request_id)


def _b64(observation: pb.Observation) -> str:
    return base64.b64encode(observation.SerializeToString()).decode("ascii")


async def fixture_lines(case: Case) -> list[str]:
    """The lines of ``case``'s fixture file, played now."""
    referee = await start_referee("127.0.0.1:0")
    try:
        slots = case.rules.sides * (2 if case.rules.partnerships else 1)
        compact = await play_raw(referee, case, [True] * slots)
        full = await play_raw(referee, case, [False] * slots)
    finally:
        await referee.stop(0)
    if [(r.slot, r.request_id, r.legal) for r in compact] != [
        (r.slot, r.request_id, r.legal) for r in full
    ]:
        raise RuntimeError(f"{case.game}: the two runs did not play the same requests")
    return [
        json.dumps(
            {
                "slot": c.slot,
                "request_id": c.request_id,
                "compact": _b64(c.observation),
                "full": _b64(f.observation),
            }
        )
        for c, f in zip(compact, full, strict=True)
    ]


def main() -> int:
    FIXTURE_DIR.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        lines = asyncio.run(fixture_lines(case))
        case.path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        print(f"{case.path.relative_to(Path.cwd())}: {len(lines)} requests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
