"""Compact observations (``Hello.compact_observations``, ``Observation.compact``).

Real gRPC throughout: a real referee on a local port, matches of remote entries, and raw
``grpc.aio`` streams (``tests/make_compact_fixture.py``) that choose the same actions on
every run, so a compact run and a full run of one seeded match ask the same requests.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterable
from typing import Any

import grpc
import grpc.aio
import pytest

from referee.engine.registry import preset
from referee.entrant_keys import EntrantKeys, key_digest, new_key
from referee.entries import Entry, parse_entry
from referee.match.config import Limits, MatchConfig
from referee.match.match import Match
from referee.sandbox.bwrap import SandboxMode
from referee.service.server import start_referee
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc
from tests.bots.harness import run
from tests.make_compact_fixture import (
    CASES,
    LIMITS,
    Case,
    Received,
    choose,
    fixture_lines,
    play_raw,
)

REGENERATE = "if the change is intended, run `.venv/bin/python -m tests.make_compact_fixture`"


def merge(rows: Iterable[tuple[int, pb.Observation]]) -> list[pb.Observation]:
    """What a bot should see: each stream's compact observations made complete, as
    tests/fixtures/compact/README.md says, written apart from the SDK's merge."""
    last: dict[int, pb.Observation] = {}
    out = []
    for slot, obs in rows:
        if obs.compact:
            prev = last[slot]
            assert (prev.game, prev.deal) == (obs.game, obs.deal)
            merged = pb.Observation()
            merged.CopyFrom(obs)
            for name in ("tricks", "declarations", "draws"):
                field = getattr(merged, name)
                del field[:]
                field.extend([*getattr(prev, name), *getattr(obs, name)])
            if obs.HasField("calabresella"):
                del merged.calabresella.bids[:]
                merged.calabresella.bids.extend([*prev.calabresella.bids, *obs.calabresella.bids])
            merged.compact = False
            obs = merged
        last[slot] = obs
        out.append(obs)
    return out


def _decode(text: str) -> pb.Observation:
    return pb.Observation.FromString(base64.b64decode(text))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.game)
def test_fixture_is_what_the_referee_sends_now(case: Case) -> None:
    """The files other SDKs' tests read are the real referee's output, played again."""
    stored = case.path.read_text(encoding="utf-8").splitlines()
    assert run(fixture_lines(case)) == stored, REGENERATE


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.game)
def test_fixture_merges_to_the_full_observations(case: Case) -> None:
    rows = [json.loads(line) for line in case.path.read_text(encoding="utf-8").splitlines()]
    compact = [(r["slot"], _decode(r["compact"])) for r in rows]
    full = [_decode(r["full"]) for r in rows]
    assert merge(compact) == full
    flags = [obs.compact for _, obs in compact]
    # Mostly compact; complete at each deal's first request on each stream, and only then.
    assert sum(flags) > len(flags) // 2
    firsts = {(slot, obs.game, obs.deal) for slot, obs in compact}
    assert len(flags) - sum(flags) == len(firsts)
    assert not any(obs.compact for obs in full)
    # A compact observation is smaller: it repeats nothing of the deal's history.
    late = [(c, f) for (_, c), f in zip(compact, full, strict=True) if len(f.tricks) > 3]
    assert late and all(c.ByteSize() < f.ByteSize() for c, f in late)


def test_what_the_fixture_holds() -> None:
    """Each kind of item a compact observation can carry appears in the fixture."""
    seen: dict[str, int] = {"declarations": 0, "draws": 0, "bids": 0, "signals": 0}
    for case in CASES:
        for line in case.path.read_text(encoding="utf-8").splitlines():
            obs = _decode(json.loads(line)["compact"])
            if obs.compact:
                seen["declarations"] += len(obs.declarations)
                seen["draws"] += len(obs.draws)
                seen["bids"] += len(obs.calabresella.bids)
                seen["signals"] += sum(1 for t in obs.tricks for p in t.plays if p.action.signal)
    assert all(seen.values()), seen


def test_streams_that_did_not_ask_get_what_they_always_got() -> None:
    """Slots 0 and 2 ask for compact observations, 1 and 3 do not, at one table."""

    async def scenario() -> tuple[list[Received], list[Received]]:
        referee = await start_referee("127.0.0.1:0")
        try:
            case = CASES[0]
            mixed = await play_raw(referee, case, [True, False, True, False])
            full = await play_raw(referee, case, [False] * 4)
        finally:
            await referee.stop(0)
        return mixed, full

    mixed, full = run(scenario())
    assert [(r.slot, r.request_id) for r in mixed] == [(r.slot, r.request_id) for r in full]
    for m, f in zip(mixed, full, strict=True):
        if m.slot in (1, 3):
            assert m.observation.SerializeToString() == f.observation.SerializeToString()
    assert any(m.observation.compact for m in mixed if m.slot in (0, 2))
    assert merge((r.slot, r.observation) for r in mixed) == [f.observation for f in full]


async def _read_request(call: Any) -> pb.PlayResponse:
    """The next response on ``call`` that carries a request."""
    while True:
        response = await call.read()
        assert isinstance(response, pb.PlayResponse), response
        if response.HasField("request"):
            return response


async def _open(stub: pb_grpc.RefereeServiceStub, hello: pb.Hello) -> tuple[Any, pb.PlayResponse]:
    """A stream opened with ``hello`` and its first response; retried while the referee
    has not yet noticed that the stream before it is gone (``seat_taken``)."""
    for _ in range(100):
        call = stub.Play()
        await call.write(pb.PlayRequest(hello=hello))
        try:
            return call, await call.read()
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.ALREADY_EXISTS:
                raise
        await asyncio.sleep(0.05)
    raise AssertionError("the seat stayed taken")


async def _tickets(match: Match, tickets: list[str], count: int) -> asyncio.Task[Any]:
    task = asyncio.create_task(match.run())
    while len(tickets) < count:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    return task


async def _gated_stream(
    address: str, ticket: str, gate: asyncio.Event, asked: asyncio.Event
) -> None:
    """A full stream that says when it is asked, and answers only while ``gate`` is open."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = pb_grpc.RefereeServiceStub(channel).Play()
        await call.write(pb.PlayRequest(hello=pb.Hello(ticket=ticket, protocol_version=1)))
        slot = -1
        while (response := await call.read()) is not grpc.aio.EOF:
            assert isinstance(response, pb.PlayResponse)
            for event in response.events:
                if event.HasField("welcome"):
                    slot = event.welcome.slot
            if response.HasField("request"):
                asked.set()
                await gate.wait()
                request = response.request
                answer = pb.Decision(request_id=request.request_id, action_id=choose(slot, request))
                await call.write(pb.PlayRequest(decision=answer))


def test_a_reconnection_mid_deal_starts_complete() -> None:
    """Slot 0 leaves with a compact request open and comes back with its ticket: it gets
    that request again, complete. It leaves again with nothing open: its next request is
    complete too. Compact ones follow each."""

    async def scenario() -> None:
        referee = await start_referee("127.0.0.1:0")
        tickets: list[str] = []
        remote = Entry("remote", remote=True)
        limits = Limits(deadline_ms=10_000, connect_timeout=20, grace=10)
        rules = preset("tressette")
        config = MatchConfig(rules, "compact-5", (remote, remote), deals=1, limits=limits)
        match = Match(referee, config, on_ticket=lambda label, ticket: tickets.append(ticket))
        task = await _tickets(match, tickets, 4)
        gate, asked = asyncio.Event(), asyncio.Event()
        gate.set()
        others = [
            asyncio.create_task(_gated_stream(referee.address, t, gate, asked)) for t in tickets[1:]
        ]

        async def answer(call: Any, request: pb.DecisionRequest) -> None:
            decision = pb.Decision(request_id=request.request_id, action_id=choose(0, request))
            await call.write(pb.PlayRequest(decision=decision))

        try:
            async with grpc.aio.insecure_channel(referee.address) as channel:
                stub = pb_grpc.RefereeServiceStub(channel)
                hello = pb.Hello(ticket=tickets[0], protocol_version=1, compact_observations=True)
                call, _ = await _open(stub, hello)
                seen: list[pb.Observation] = []
                while True:
                    request = (await _read_request(call)).request
                    seen.append(request.observation)
                    merged = merge((0, o) for o in seen)[-1]
                    # Mid-deal, with its history only in the requests before; leading,
                    # so that another seat is asked once it has played.
                    if request.observation.compact and len(merged.tricks) >= 2 and not merged.trick:
                        break
                    await answer(call, request)
                call.cancel()
                call, welcome = await _open(stub, hello)
                assert welcome.events[0].HasField("welcome")
                again = (await _read_request(call)).request
                assert again.request_id == request.request_id
                assert not again.observation.compact
                assert again.observation == merged
                gate.clear()
                asked.clear()
                await answer(call, again)
                await asked.wait()  # its card is played: nothing is open for slot 0
                call.cancel()
                call, _ = await _open(stub, hello)
                gate.set()
                fresh = (await _read_request(call)).request
                assert not fresh.observation.compact
                assert (fresh.observation.game, fresh.observation.deal) == (
                    merged.game,
                    merged.deal,
                )
                assert len(fresh.observation.tricks) > len(merged.tricks)
                await answer(call, fresh)
                after = (await _read_request(call)).request.observation
                assert after.compact
                assert (
                    merge([(0, fresh.observation), (0, after)])[-1].tricks[:-1]
                    == fresh.observation.tricks
                )
                call.cancel()
        finally:
            for other in others:
                other.cancel()
            task.cancel()
            await asyncio.gather(task, *others, return_exceptions=True)
            await referee.stop(0)

    run(scenario())


def test_an_entrant_keys_stream_starts_each_match_complete() -> None:
    """One stream of an entrant key plays game 1 of two matches of one deal each: the
    same game and deal numbers, but the second match starts with a complete observation."""

    async def scenario() -> list[list[pb.Observation]]:
        referee = await start_referee("127.0.0.1:0")
        key = new_key()
        keys = EntrantKeys(
            lambda digest: ("alice", False) if digest == key_digest(key) else None,
            streams_per_table=1,
        )
        keys.add("alice", 2)
        referee.book.keys = keys
        rules = preset("tressette-a-due")
        entries = (Entry("alice", remote=True), parse_entry("random"))
        config = MatchConfig(
            rules, "compact-6", entries, deals=1, limits=LIMITS, sandbox=SandboxMode.OFF
        )
        matches: list[list[pb.Observation]] = []
        try:
            async with grpc.aio.insecure_channel(referee.address) as channel:
                stub = pb_grpc.RefereeServiceStub(channel)
                call = stub.Play()
                hello = pb.Hello(key=key, protocol_version=1, compact_observations=True)
                await call.write(pb.PlayRequest(hello=hello))
                reader = asyncio.create_task(_play_key(call, matches))
                for left in (1, 0):
                    match = Match(referee, config, keys=keys)
                    await match.run(games=[1])
                    keys.set_matches_left("alice", left)
                await asyncio.wait_for(reader, 30)
        finally:
            await referee.stop(0)
        return matches

    first, second = run(scenario())
    assert (first[-1].game, first[-1].deal) == (second[0].game, second[0].deal) == (1, 1)
    assert first[0].compact is False and any(o.compact for o in first)
    assert second[0].compact is False and any(o.compact for o in second)


async def _play_key(call: Any, matches: list[list[pb.Observation]]) -> None:
    """Answer every request of a key's stream until the referee ends it, noting each
    match's observations."""
    while (response := await call.read()) is not grpc.aio.EOF:
        assert isinstance(response, pb.PlayResponse)
        if any(e.HasField("welcome") for e in response.events):
            matches.append([])
        if response.HasField("request"):
            request = response.request
            matches[-1].append(request.observation)
            answer = pb.Decision(request_id=request.request_id, action_id=choose(0, request))
            await call.write(pb.PlayRequest(decision=answer))


def test_the_python_sdk_hands_its_bots_complete_observations() -> None:
    """Four SDK bots in one process (a stream each, all asking for compact observations)
    play a seeded match on the real referee; each saw what a full stream gets."""
    from tavolo_bot import Bot, Turn, run_async

    seen: dict[int, list[tuple[int, bytes]]] = {}

    class Same(Bot):
        """Plays as the fixture's raw streams do, and keeps every observation it saw."""

        slot = -1

        def on_event(self, event: pb.Event) -> None:
            if event.HasField("welcome"):
                self.slot = event.welcome.slot

        def choose(self, turn: Turn) -> int:
            request = turn.request
            seen.setdefault(self.slot, []).append(
                (request.request_id, request.observation.SerializeToString())
            )
            return choose(self.slot, request)

    async def scenario() -> list[Received]:
        referee = await start_referee("127.0.0.1:0")
        try:
            case = CASES[0]
            tickets: list[str] = []
            remote = Entry("remote", remote=True)
            config = MatchConfig(
                case.rules, case.seed, (remote, remote), deals=case.deals, limits=LIMITS
            )
            match = Match(referee, config, on_ticket=lambda label, ticket: tickets.append(ticket))
            task = await _tickets(match, tickets, 4)
            assert await run_async(Same, referee=referee.address, tickets=tickets) == 0
            await task
            return await play_raw(referee, case, [False] * 4)
        finally:
            await referee.stop(0)

    full = run(scenario())
    assert sorted(seen) == [0, 1, 2, 3]
    got = sorted((rid, slot, obs) for slot, rows in seen.items() for rid, obs in rows)
    assert got == [(r.request_id, r.slot, r.observation.SerializeToString()) for r in full]
