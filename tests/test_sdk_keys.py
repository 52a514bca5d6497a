"""The Python SDK's key mode against a scripted referee that breaks the connection.

All streams of an SDK process share one channel, so a broken connection breaks them all,
and the referee may seat each returning stream at the slot another one was playing
(docs/protocol.md §4.7). The bot of each slot must go on playing it, whichever stream
brings it back, and a re-sent request must get the answer already given.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as rpc

ROOT = Path(__file__).resolve().parent.parent
KEY = "tvk_scripted-key"

COUNTING_BOT = """\
import sys

from tavolo_bot import Bot, main

made = 0


class Counting(Bot):
    \"\"\"Says which bot it is and which slots it was seated at; plays the first legal id.\"\"\"

    def __init__(self):
        global made
        made += 1
        self.number = made
        self.slots = []

    def on_event(self, event):
        if event.WhichOneof("event") == "welcome":
            self.slots.append(event.welcome.slot)

    def choose(self, turn):
        sys.stderr.write(f"bot {self.number} chooses for slot {self.slots[-1]}\\n")
        return turn.legal[-1].id

    def on_match_over(self):
        sys.stderr.write(f"bot {self.number} played slots {sorted(set(self.slots))}\\n")


main(Counting)
"""


def _request(request_id: int, ids: list[int]) -> pb.DecisionRequest:
    return pb.DecisionRequest(
        request_id=request_id,
        deadline_ms=5000,
        observation=pb.Observation(seat=0, game=1, deal=1, players=2, hand=["3D", "4D"]),
        legal_actions=[pb.Action(id=i, kind=pb.ACTION_KIND_PLAY, text=str(i)) for i in ids],
        attempts_left=3,
    )


@dataclass
class ScriptedKeyReferee(rpc.RefereeServiceServicer):
    """First life: seats two key streams at slots 0 and 1 and asks each one request, then
    the test stops the server. Second life: seats the returning streams at the slots in
    the other order, sends each slot's open request again, then one more, then MatchOver."""

    life: int
    answers: dict[tuple[int, int], int]
    """(slot, request id) -> the action id answered."""
    both_answered: asyncio.Event = field(default_factory=asyncio.Event)
    arrivals: int = 0
    done: int = 0
    problems: list[str] = field(default_factory=list)

    async def Play(
        self, request_iterator: AsyncIterator[pb.PlayRequest], context: Any
    ) -> AsyncIterator[pb.PlayResponse]:
        first = await anext(request_iterator)
        if first.hello.key != KEY:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown_key: no entrant")
        self.arrivals += 1
        slot = self.arrivals - 1 if self.life == 1 else 2 - self.arrivals
        accepted = pb.KeyAccepted(entrant="alice", streams_per_table=1, matches_left=1)
        open_request = _request(10 + slot, [1, 2, 3])
        # As the referee does: the Welcome alone, then the response with the request.
        pending = pb.PlayResponse(
            events=[
                pb.Event(match_started=pb.MatchStarted(match_id="m1", game="tressette-a-due")),
                pb.Event(game_started=pb.GameStarted(game=1, seat=slot)),
            ],
            request=open_request,
        )
        yield pb.PlayResponse(events=[pb.Event(key_accepted=accepted)])
        yield pb.PlayResponse(events=[pb.Event(welcome=pb.Welcome(match_id="m1", slot=slot))])
        yield pending
        if self.life == 1:
            await self._answer(request_iterator, slot, open_request)
            if len(self.answers) == 2:
                self.both_answered.set()
            await asyncio.Event().wait()  # until the server stops under it
        # Second life: that pending response was the one sent again (§4.5).
        await self._answer(request_iterator, slot, open_request)
        more = _request(20 + slot, [4, 5, 6])
        yield pb.PlayResponse(request=more)
        await self._answer(request_iterator, slot, more)
        yield pb.PlayResponse(events=[pb.Event(match_over=pb.MatchOver(match_id="m1"))])
        self.done += 1
        # The entrant has no match left: the stream ends with OK.

    async def _answer(
        self, requests: AsyncIterator[pb.PlayRequest], slot: int, req: pb.DecisionRequest
    ) -> None:
        message = await anext(requests)
        decision = message.decision
        if decision.request_id != req.request_id:
            self.problems.append(f"slot {slot}: answered {decision.request_id}")
        key = (slot, decision.request_id)
        if key in self.answers and self.answers[key] != decision.action_id:
            self.problems.append(f"slot {slot}: request {decision.request_id} answered anew")
        self.answers[key] = decision.action_id


async def _serve(servicer: ScriptedKeyReferee, port: int) -> grpc.aio.Server:
    server = grpc.aio.server()
    rpc.add_RefereeServiceServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    assert server.add_insecure_port(f"127.0.0.1:{port}") == port
    await server.start()
    return server


def test_a_broken_connection_keeps_each_slots_bot_whichever_stream_returns(
    tmp_path: Path,
) -> None:
    script = tmp_path / "counting.py"
    script.write_text(COUNTING_BOT, encoding="utf-8")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    answers: dict[tuple[int, int], int] = {}

    async def scenario() -> tuple[int, str, ScriptedKeyReferee]:
        first = ScriptedKeyReferee(1, answers)
        server = await _serve(first, port)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
        env.update(
            PYTHONPATH=str(ROOT / "clients" / "python"),
            TAVOLO_REFEREE=f"127.0.0.1:{port}",
            TAVOLO_KEY=KEY,
            TAVOLO_STREAMS="2",
            TAVOLO_RECONNECT_SECONDS="20",
        )
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(script), env=env, stderr=asyncio.subprocess.PIPE
        )
        await asyncio.wait_for(first.both_answered.wait(), 30)
        await server.stop(0)  # both streams break at once: they share the channel
        second = ScriptedKeyReferee(2, answers)
        server = await _serve(second, port)
        try:
            _, err = await asyncio.wait_for(process.communicate(), 60)
        finally:
            await server.stop(0)
        assert process.returncode is not None
        return process.returncode, err.decode(), second

    code, err, second = asyncio.run(scenario())
    assert code == 0, err
    assert second.problems == [] and second.done == 2, (second.problems, err)
    # Bot 1 is made only to check that the bot can be made; bots 2 and 3 play the two
    # slots. None is made anew mid-match, and each plays its own slot to the end, even
    # when a stream that played the other slot brought it back.
    played = sorted(line for line in err.splitlines() if " played slots " in line)
    assert [line.split(" played slots ")[1] for line in played] in (
        ["[0]", "[1]"],
        ["[1]", "[0]"],
    ), err
    assert {line.split()[1] for line in played} == {"2", "3"}, err
    assert "bot 4" not in err, err
