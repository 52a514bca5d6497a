"""Streams without a Hello cannot pile up on the referee's TCP listener.

A remote caller opens 2,000 Play streams on one connection and never sends a Hello.
Before, the referee held every one for the Hello window (thousands of them took it from
130 to 530 MB, and cost an honest bot its deadlines). Now a connection may have
``HELLO_LESS_STREAMS`` streams waiting for their Hello; a further one is refused at once,
and a stream with a Hello on another connection is served meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import Counter

import grpc

from referee.service.bot_streams import HELLO_LESS_STREAMS, HELLO_TIMEOUT
from referee.service.server import start_referee
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc
from tournaments.benchmarks.hello_flood import FLOOD

STREAMS = 2000


async def _honest_hello(address: str) -> str:
    """What the referee answers a stream with a Hello on a connection of its own."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = pb_grpc.RefereeServiceStub(channel).Play()
        await call.write(pb.PlayRequest(hello=pb.Hello(ticket="not-a-ticket", protocol_version=1)))
        try:
            await call.read()
        except grpc.aio.AioRpcError as exc:
            return f"{exc.code().name}: {exc.details()}"
        return "answered"


def test_a_connection_cannot_hold_more_than_its_share_of_hello_less_streams() -> None:
    async def scenario() -> tuple[str, Counter[str]]:
        referee = await start_referee()
        flood = subprocess.Popen(
            [sys.executable, "-c", FLOOD, referee.address, str(STREAMS), str(HELLO_LESS_STREAMS)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert flood.stdout is not None
        try:
            # The streams over the cap are refused at once, long before the window ends.
            refused = await asyncio.wait_for(
                asyncio.to_thread(flood.stdout.readline), HELLO_TIMEOUT - 2
            )
            assert refused == "refused\n"
            # The held ones are still waiting: another connection is served meanwhile.
            honest = await asyncio.wait_for(_honest_hello(referee.address), 5)
            outcome = await asyncio.wait_for(asyncio.to_thread(flood.stdout.readline), 60)
            return honest, Counter(json.loads(outcome))
        finally:
            flood.kill()
            flood.wait()
            await referee.stop(0)

    honest, codes = asyncio.run(scenario())
    assert honest == "UNAUTHENTICATED: unknown_ticket: unknown ticket"
    assert codes == Counter(
        {
            "RESOURCE_EXHAUSTED: too_many_streams": STREAMS - HELLO_LESS_STREAMS,
            "DEADLINE_EXCEEDED: no_hello": HELLO_LESS_STREAMS,
        }
    )
