"""Hello never starves: streams that arrive while the referee's loop is busy all get in,
and the turnstile keeps a saturated loop's turns short (referee/service/turnstile.py).

These check the mechanisms; how many streams a loaded referee seats within the
connection window is measured by ``tavolo bench referee --shards`` (docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections import Counter

from referee.service.server import PENDING_STREAMS, start_referee
from referee.service.turnstile import Turnstile

STREAMS = 1500
"""More than gRPC core's default of 1,000 calls waiting to be taken, past which it
starts refusing new ones at random."""

CLIENT = """
import asyncio, json, sys
from collections import Counter
import grpc
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc

async def main(address, streams):
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)
        calls = [stub.Play() for _ in range(streams)]
        hello = pb.PlayRequest(hello=pb.Hello(ticket="not-a-ticket", protocol_version=1))
        await asyncio.gather(*(call.write(hello) for call in calls))
        print("sent", flush=True)
        codes = Counter()
        async def outcome(call):
            try:
                await call.read()
            except grpc.aio.AioRpcError as exc:
                codes[f"{exc.code().name}: {exc.details()}"] += 1
                return
            codes["answered"] += 1
        await asyncio.gather(*(outcome(call) for call in calls))
        print(json.dumps(codes), flush=True)

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def test_streams_that_arrive_while_the_loop_is_busy_are_all_answered() -> None:
    assert PENDING_STREAMS > STREAMS

    async def scenario() -> Counter[str]:
        referee = await start_referee()
        client = subprocess.Popen(
            [sys.executable, "-c", CLIENT, referee.address, str(STREAMS)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert client.stdout is not None
        try:
            # The referee's loop is held up, as a saturated loop would be, until every
            # Hello is sent: gRPC core queues the new calls meanwhile, and the loop takes
            # them after.
            assert client.stdout.readline() == "sent\n"
            outcome = await asyncio.wait_for(asyncio.to_thread(client.stdout.readline), 120)
            return Counter(json.loads(outcome))
        finally:
            client.kill()
            client.wait()
            await referee.stop(0)

    codes = asyncio.run(scenario())
    # Each stream was taken and heard why its ticket opens nothing; none was dropped.
    assert codes == Counter({"UNAUTHENTICATED: unknown_ticket: unknown ticket": STREAMS})


def test_the_turnstile_lets_fewer_requests_through_while_the_loop_runs_late() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        gate = Turnstile()
        gate.TICK = 3600  # no tick of its own: this test gives every tick itself
        start = int(gate.limit)
        for _ in range(start):
            await gate.enter()
        assert gate.open == start and not gate.waiting
        # One more than the limit waits, in order, for a request to end.
        late = [asyncio.ensure_future(gate.enter()) for _ in range(3)]
        await asyncio.sleep(0)
        assert len(gate.waiting) == 3 and not any(t.done() for t in late)
        gate.leave()
        await asyncio.sleep(0)
        assert late[0].done() and not late[1].done()
        # A tick 50 ms late: the limit falls below what is open, not below the floor.
        gate._tick(loop.time() - 0.05)
        assert gate.limit == max(Turnstile.MIN_LIMIT, start * 0.9)
        for _ in range(30):
            gate._tick(loop.time() - 0.05)
        assert gate.limit == Turnstile.MIN_LIMIT
        while gate.open > Turnstile.MIN_LIMIT:
            gate.leave()
        await asyncio.sleep(0)
        assert not late[1].done(), "let through above the limit"
        # Ticks on time while requests wait: the limit grows, one request a tick.
        gate._tick(loop.time())
        await asyncio.sleep(0)
        assert gate.limit == Turnstile.MIN_LIMIT + 1 and late[1].done()
        # A request cancelled as it waits gives its turn to the next.
        late[2].cancel()
        await asyncio.sleep(0)
        nxt = asyncio.ensure_future(gate.enter())
        gate.leave()
        await asyncio.sleep(0)
        assert nxt.done() and gate.open == Turnstile.MIN_LIMIT + 1

    asyncio.run(scenario())


def test_the_turnstile_measures_a_loop_that_runs_late() -> None:
    async def scenario() -> float:
        gate = Turnstile()
        await gate.enter()
        # The loop is held for 20 ms: the tick due 2 ms after the request runs late. It
        # runs in the loop's next turn, after this task's, so two turns are awaited.
        time.sleep(0.02)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        lag = gate.lag
        gate.leave()
        return lag

    assert asyncio.run(scenario()) >= 0.015
