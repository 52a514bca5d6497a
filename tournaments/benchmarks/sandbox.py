"""The sandbox's costs: starting a bot process in it, and decisions over Unix sockets.

``bench_startup`` starts the same command again and again, unconfined and in a bubblewrap
sandbox, and times each from the call that starts it to its exit (``/bin/true``: what the
sandbox itself costs) or to its first message on its socket (the built-in random bot: what
a bot author sees). ``bench_transports`` plays one table of two built-in random bots
through the real referee twice: local entries, each process on a Unix socket of its own
(the way the referee runs every bot it starts), and remote entries on the referee's TCP
listener (bots elsewhere); it reports the referee's own round-trip clock for both.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from referee.engine.registry import preset
from referee.entries import Entry, parse_entry
from referee.match.config import Limits, MatchConfig
from referee.match.match import Match
from referee.sandbox.bot_process import start_bot
from referee.sandbox.bwrap import SandboxMode
from referee.service.server import start_referee
from tournaments.benchmarks.round_trips import LatencyRun, bench_tables, percentile


@dataclass(frozen=True)
class Startup:
    """Start-up times of one command in one mode, in seconds."""

    command: str
    sandbox: str
    times: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.times)


async def _to_exit(entry: Entry, mode: SandboxMode, root: Path) -> float:
    start = time.perf_counter()
    bot = await start_bot(entry, "bench", root / secrets.token_hex(4), {}, sandbox=mode)
    await bot.process.wait()
    elapsed = time.perf_counter() - start
    await bot.stop(0)
    return elapsed


async def _to_hello(entry: Entry, mode: SandboxMode, root: Path) -> float:
    """From starting the bot to its first message (its Hello) on its own socket."""
    arrived: asyncio.Future[float] = asyncio.get_running_loop().create_future()

    async def play(raw: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await context.read()
        if not arrived.done():
            arrived.set_result(time.perf_counter())
        await context.abort(grpc.StatusCode.CANCELLED, "bench: hello received")

    server = grpc.aio.server()
    handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(play)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("tavolo.v1.RefereeService", {"Play": handler}),)
    )
    folder = Path(tempfile.mkdtemp(prefix="tavolo-", dir=root))
    socket = folder / "referee.sock"
    server.add_insecure_port(f"unix:{socket}")
    await server.start()
    try:
        start = time.perf_counter()
        env = {"TAVOLO_TICKET": "bench", "TAVOLO_RECONNECT_SECONDS": "0"}
        bot = await start_bot(entry, "bench", folder / "bot", env, sandbox=mode, socket=socket)
        try:
            return await asyncio.wait_for(arrived, 60) - start
        finally:
            await bot.stop(1)
    finally:
        await server.stop(0)


async def bench_startup(runs: int, modes: Sequence[SandboxMode]) -> list[Startup]:
    """Each mode, ``runs`` times each: ``/bin/true`` to its exit, the random bot to Hello."""
    out = []
    true = Entry("true", command=("/bin/true",))
    random_bot = parse_entry("random")
    with tempfile.TemporaryDirectory(prefix="tavolo-bench-") as tmp:
        root = Path(tmp)
        for mode in modes:
            await _to_exit(true, mode, root)  # warm the page cache
            times = [await _to_exit(true, mode, root) for _ in range(runs)]
            out.append(Startup("/bin/true", mode.value, tuple(times)))
            await _to_hello(random_bot, mode, root)
            times = [await _to_hello(random_bot, mode, root) for _ in range(runs)]
            out.append(Startup("random bot to Hello", mode.value, tuple(times)))
    return out


@dataclass(frozen=True)
class TransportRun:
    """Round trips of one table."""

    transport: str
    sandbox: str
    decisions: int
    p50_us: float
    p99_us: float


async def _local_table(deals: int, mode: SandboxMode) -> TransportRun:
    referee = await start_referee("127.0.0.1:0")
    trips: list[float] = []
    try:
        entries = (parse_entry("random"), parse_entry("random"))
        config = MatchConfig(
            preset("tressette"), "bench-unix", entries, deals,
            limits=Limits(deadline_ms=5000, restart_crashed=False), sandbox=mode,
        )  # fmt: skip
        match = Match(referee, config, on_decision=trips.append)
        await match.run()
    finally:
        await referee.stop(0)
    # The first deal's trips include the processes' warm-up; the TCP run skips them too.
    trips = trips[len(trips) // (2 * deals) :]
    return TransportRun(
        "unix", mode.value, len(trips), percentile(trips, 50) * 1e6, percentile(trips, 99) * 1e6
    )


@dataclass(frozen=True)
class FreezeRun:
    """One sandboxed table played with its bots stopped off move, or pondering."""

    ponder: bool
    decisions: int
    seconds: float

    @property
    def ms_a_decision(self) -> float:
        return self.seconds / self.decisions * 1000


async def _timed_table(deals: int, ponder: bool) -> FreezeRun:
    referee = await start_referee("127.0.0.1:0")
    trips: list[float] = []
    folder = tempfile.TemporaryDirectory(prefix="tavolo-bench-freeze-")
    try:
        # The random bot as a cmd: entry: built-in bots are neither stopped nor started
        # afresh each game, entrants' bots are.
        bot = parse_entry(f"cmd:{sys.executable} -m tavolo_bot.bots.random")
        entries = (bot, bot)
        limits = Limits(deadline_ms=5000, restart_crashed=False, ponder=ponder)
        config = MatchConfig(
            preset("tressette"), "bench-freeze", entries, deals, limits=limits,
            sandbox=SandboxMode.BWRAP,
        )  # fmt: skip
        match = Match(referee, config, on_decision=trips.append, workdir=Path(folder.name))
        await match.open()  # the first processes start outside the timing, in both runs
        start = time.perf_counter()
        await match.play()
        seconds = time.perf_counter() - start
        await match.close()
    finally:
        await referee.stop(0)
        folder.cleanup()
    return FreezeRun(ponder, len(trips), seconds)


def bench_freezing(deals: int) -> list[FreezeRun]:
    """The same sandboxed table, its bots stopped off move (the default), then pondering:
    the difference a decision is what stopping and starting a sandbox costs."""
    return [asyncio.run(_timed_table(deals, ponder)) for ponder in (False, True)]


def _tcp_figures(run: LatencyRun) -> TransportRun:
    return TransportRun("tcp", "off", run.decisions, run.p50_us, run.p99_us)


def bench_transports(deals: int, mode: SandboxMode) -> list[TransportRun]:
    """One table over Unix sockets (local entries, ``mode``), then over TCP (remote)."""
    unix = asyncio.run(_local_table(deals, mode))
    tcp = asyncio.run(bench_tables(1, deals))
    return [unix, _tcp_figures(tcp)]
