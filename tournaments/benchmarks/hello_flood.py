"""What streams that never say Hello cost the referee: its memory, and what it refused.

A client process opens ``streams`` Play streams on one connection and sends nothing; the
referee (in this process) holds ``HELLO_LESS_STREAMS`` of them for the Hello window and
refuses the rest at once. Its resident memory is sampled throughout.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass

from referee.service.bot_streams import HELLO_LESS_STREAMS, HELLO_TIMEOUT
from referee.service.server import start_referee

FLOOD = """
import asyncio, json, sys
from collections import Counter
import grpc

async def main(address, streams, held):
    async with grpc.aio.insecure_channel(address) as channel:
        method = channel.stream_stream("/tavolo.v1.RefereeService/Play")
        calls = [method() for _ in range(streams)]
        codes = Counter()
        async def outcome(call):
            try:
                await call.read()
            except grpc.aio.AioRpcError as exc:
                codes[f"{exc.code().name}: {(exc.details() or '').split(':')[0]}"] += 1
                if sum(codes.values()) == streams - held:
                    print("refused", flush=True)
        await asyncio.gather(*(outcome(call) for call in calls))
        print(json.dumps(codes), flush=True)

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
"""
"""The flooding client: ``python -c FLOOD ADDRESS STREAMS HELD``. It prints ``refused``
once all but HELD streams have ended, then how every stream ended, as JSON (``CODE:
reason`` to a count)."""


@dataclass(frozen=True)
class FloodBench:
    streams: int
    held: int
    """Streams the referee held for the Hello window (its cap on one connection)."""
    refused: dict[str, int]
    """How the client's streams ended, by status."""
    rss_before_mb: float
    rss_peak_mb: float


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def bench_hello_flood(streams: int) -> FloodBench:
    """Flood a fresh referee with ``streams`` Hello-less streams on one connection."""
    referee = await start_referee()
    try:
        before = peak = _rss_mb()
        client = await asyncio.create_subprocess_exec(
            sys.executable, "-c", FLOOD, referee.address, str(streams),
            str(HELLO_LESS_STREAMS), stdout=subprocess.PIPE,
        )  # fmt: skip
        assert client.stdout is not None
        done = asyncio.ensure_future(client.stdout.read())
        while not done.done():
            peak = max(peak, _rss_mb())
            await asyncio.wait({done}, timeout=0.05)
        await client.wait()
        last = (done.result().splitlines() or [b"{}"])[-1]
        codes = Counter(json.loads(last))
    finally:
        await referee.stop(0)
    return FloodBench(streams, HELLO_LESS_STREAMS, dict(codes), before, peak)


def describe() -> str:
    return f"Hello window {HELLO_TIMEOUT:g} s, {HELLO_LESS_STREAMS} Hello-less streams a connection"
