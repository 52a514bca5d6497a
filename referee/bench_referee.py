"""The referee benchmark: decision round trips through the real referee, and a bare echo.

``bench_tables`` starts a referee on a free local port, opens ``tables`` matches of two
``remote`` entries each (four slots per match) and starts exactly four random-bot
processes (``python -m tavolo_bot.bots.random``): process k plays slot k of every table,
one stream per ticket. The referee times each answered request itself, from just before
it writes the ``PlayResponse`` carrying the ``DecisionRequest`` to when the ``Decision``
is taken from the slot's queue (``Match(on_decision=...)``).

``bench_echo`` times the same exchange with nothing but ``grpc.aio``: the server writes a
small message on a bidirectional stream and awaits the client's echo, timed on the
server side like the referee; the clients are separate processes, as the bots are.

Run as ``python -m referee.bench_referee echo-client HOST:PORT STREAMS`` this module is
the echo client process.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from referee.bot_process import BotProcess, start_bot
from referee.engine.game import Termination
from referee.engine.rules import Rules, preset
from referee.entries import BUILT_IN_BOTS, Entry
from referee.links import SlotLink
from referee.match import Limits, Match, MatchConfig
from referee.service import start_referee

BOT_PROCESSES = 4
"""Bot processes of a run: process k plays slot k of every match, whatever the table count."""
SLOTS = 4
"""Slots of a match: two entries of two partners."""
DECISIONS_PER_RUN = 12_000
"""Default size of a run, about: deals per game are chosen to come close to it."""
DECISIONS_PER_DEAL = 40
"""Decisions of one Tressette deal: one a card (declarations are rare for random bots)."""
ECHO_TRIPS = 10_000
"""Default round trips of an echo run, over all its streams."""
ECHO_PAYLOAD = b"x" * 16
"""What the echo server sends: about the size of a ``Decision``."""
ECHO_METHOD = "/tavolo.bench.Echo/Echo"
_FAULTS = frozenset({Termination.TIMEOUT, Termination.ILLEGAL_ACTION, Termination.CRASH})
_STOP_GRACE = 5.0


class BenchError(RuntimeError):
    """A run that could not be measured: a bot that did not connect, or took too long."""


@dataclass(frozen=True)
class LatencyRun:
    """Round trips of one run."""

    tables: int
    """Matches played at once (for the echo: streams)."""
    p50_us: float
    """Median round trip, in microseconds."""
    p99_us: float
    decisions_per_second: float
    """Answered requests over the wall time of the play phase."""
    decisions: int
    """Answered requests timed: every one after all streams had connected."""
    seconds: float
    """Wall time of the play phase: all streams connected to the last match over."""
    deals: int = 0
    """Deals per game of each match (0 for the echo)."""
    faults: int = 0
    """Games that ended by a timeout, illegal actions or a lost bot (should be 0)."""


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, interpolated between ranks."""
    if not values:
        raise ValueError("no values")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


def _summary(
    tables: int,
    samples: list[tuple[float, float]],
    start: float,
    end: float,
    *,
    deals: int = 0,
    faults: int = 0,
) -> LatencyRun:
    """Figures of the (finish time, round trip) samples that finished after ``start``."""
    trips = [trip for done, trip in samples if done >= start]
    if not trips:
        raise BenchError(f"{tables} table(s): no round trip was timed")
    seconds = end - start
    return LatencyRun(
        tables=tables,
        p50_us=percentile(trips, 50) * 1e6,
        p99_us=percentile(trips, 99) * 1e6,
        decisions_per_second=len(trips) / seconds,
        decisions=len(trips),
        seconds=seconds,
        deals=deals,
        faults=faults,
    )


def default_deals(tables: int) -> int:
    """Deals per game so that a run of ``tables`` matches has about ``DECISIONS_PER_RUN``."""
    per_deal = 2 * DECISIONS_PER_DEAL * tables  # two games a match (both seatings)
    return max(1, math.ceil(DECISIONS_PER_RUN / per_deal))


# -- processes ---------------------------------------------------------------------------


async def _start(entry: Entry, label: str, root: Path, env: dict[str, str]) -> BotProcess:
    return await start_bot(entry, label, root / label, env)


async def _stop(processes: Iterable[BotProcess]) -> list[str]:
    """Stop and reap every process; the exit notes of those that failed."""
    processes = list(processes)
    await asyncio.gather(*(p.stop(_STOP_GRACE) for p in processes))
    failed = []
    for p in processes:
        code = p.process.returncode
        if code != 0:
            tail = p.stderr_tail(5)
            failed.append(
                f"{p.label}: exit status {code}" + (f"; stderr ends: {tail}" if tail else "")
            )
    return failed


async def _until(
    work: Awaitable[Any], processes: Sequence[BotProcess], timeout: float, what: str
) -> Any:
    """Await ``work`` within ``timeout`` seconds; fail early if a process fails meanwhile."""
    task = asyncio.ensure_future(work)
    exits = {asyncio.ensure_future(p.process.wait()): p for p in processes}
    end = time.monotonic() + timeout
    try:
        while not task.done():
            left = end - time.monotonic()
            if left <= 0:
                raise BenchError(f"{what}: not done within {timeout:g} s")
            done, _ = await asyncio.wait(
                {task, *exits}, timeout=left, return_when=asyncio.FIRST_COMPLETED
            )
            for exited in done - {task}:
                p = exits.pop(exited)
                if p.process.returncode != 0:  # an exit with 0 is a process whose work is over
                    tail = p.stderr_tail(5)
                    raise BenchError(
                        f"{what}: {p.label} exited with status {p.process.returncode}"
                        + (f"; stderr ends:\n{tail}" if tail else "")
                    )
        return task.result()
    finally:
        task.cancel()
        for exit_wait in exits:
            exit_wait.cancel()


# -- the referee -------------------------------------------------------------------------


def _keep_tickets(slots: list[str]) -> Callable[[str, str], None]:
    """An ``on_ticket`` that appends each ticket to ``slots``, in slot order."""

    def on_ticket(label: str, ticket: str) -> None:
        slots.append(ticket)

    return on_ticket


async def bench_tables(
    tables: int,
    deals: int,
    *,
    rules: Rules | None = None,
    timeout: float = 120.0,
    processes: int = BOT_PROCESSES,
) -> LatencyRun:
    """Play ``tables`` matches of ``deals`` deals a game at once; time every decision.

    Bot process ``j`` of ``processes`` plays the slots ``k`` with ``k % processes == j``
    of every table (the default, 4, is one slot of each table per process).
    """
    rules = rules or preset("tressette")
    if rules.sides != 2 or not rules.partnerships:
        raise ValueError("the referee bench plays a partnership game: four slots a match")
    samples: list[tuple[float, float]] = []
    clock = time.monotonic

    def on_decision(seconds: float) -> None:
        samples.append((clock(), seconds))

    referee = await start_referee("127.0.0.1:0")
    bots: list[BotProcess] = []
    tasks: list[asyncio.Task[Any]] = []
    deadline = clock() + timeout
    try:
        remote = Entry("remote", remote=True)
        config = MatchConfig(
            rules,
            "bench",
            (remote, remote),
            deals=deals,
            limits=Limits(connect_timeout=timeout, grace=1.0),
        )
        tickets: list[list[str]] = []
        matches = []
        for _ in range(tables):
            slots: list[str] = []
            tickets.append(slots)
            matches.append(
                Match(
                    referee,
                    config,
                    on_ticket=_keep_tickets(slots),
                    on_decision=on_decision,
                )
            )
        tasks = [asyncio.create_task(m.run()) for m in matches]
        while any(len(slots) < SLOTS for slots in tickets):
            await asyncio.sleep(0)  # each run() hands out its tickets before its first wait
        links: list[SlotLink] = [link for m in matches for row in m.links for link in row]
        bot = Entry("random", command=(sys.executable, "-m", BUILT_IN_BOTS["random"]))
        with tempfile.TemporaryDirectory(prefix="tavolo-bench-") as root:
            for j in range(processes):
                env = {
                    "TAVOLO_REFEREE": referee.address,
                    "TAVOLO_TICKET": ",".join(
                        slots[k] for slots in tickets for k in range(j, SLOTS, processes)
                    ),
                    "TAVOLO_SEED": f"bench/{j}",
                }
                bots.append(await _start(bot, f"bot{j}", Path(root), env))
            await _until(
                asyncio.gather(*(link.wait_connected(timeout) for link in links)),
                bots,
                deadline - clock(),
                f"{tables} table(s): connecting the bots",
            )
            start = clock()
            results = await _until(
                asyncio.gather(*tasks), bots, deadline - clock(), f"{tables} table(s)"
            )
            end = clock()
            failed = await _stop(bots)
        if failed:
            raise BenchError(f"{tables} table(s): a bot process failed: {failed[0]}")
        faults = sum(o.termination in _FAULTS for r in results for o in r.outcomes)
        return _summary(tables, samples, start, end, deals=deals, faults=faults)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await _stop(bots)
        await referee.stop(0)


# -- the echo ----------------------------------------------------------------------------


class _EchoServer:
    """Streams that each wait for all, then do ``trips`` timed write-and-await-echo."""

    def __init__(self, streams: int, trips: int) -> None:
        self.streams = streams
        self.trips = trips
        self.samples: list[tuple[float, float]] = []
        self.connected = 0
        self.go = asyncio.Event()
        self.start = 0.0
        self.finished = 0
        self.done = asyncio.Event()
        self.end = 0.0

    async def echo(
        self, request_iterator: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        if await context.read() is grpc.aio.EOF:  # the client's first message opens the stream
            return
        self.connected += 1
        if self.connected == self.streams:
            self.start = time.monotonic()
            self.go.set()
        await self.go.wait()
        clock, samples = time.monotonic, self.samples
        try:
            for _ in range(self.trips):
                started = clock()
                await context.write(ECHO_PAYLOAD)
                if await context.read() is grpc.aio.EOF:
                    return
                done = clock()
                samples.append((done, done - started))
        finally:
            self.finished += 1
            if self.finished == self.streams:
                self.end = clock()
                self.done.set()


async def bench_echo(streams: int, trips: int, *, timeout: float = 120.0) -> LatencyRun:
    """``trips`` echo round trips in all over ``streams`` streams of up to four processes."""
    per_stream = max(1, trips // streams)
    echo = _EchoServer(streams, per_stream)
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(echo.echo)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(ECHO_METHOD.split("/")[1], {"Echo": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    processes: list[BotProcess] = []
    try:
        counts = [streams // BOT_PROCESSES + (k < streams % BOT_PROCESSES) for k in range(4)]
        command = (sys.executable, "-m", "referee.bench_referee", "echo-client")
        with tempfile.TemporaryDirectory(prefix="tavolo-bench-") as root:
            for k, count in enumerate(c for c in counts if c):
                entry = Entry("echo", command=(*command, f"127.0.0.1:{port}", str(count)))
                processes.append(await _start(entry, f"echo{k}", Path(root), {}))
            await _until(echo.done.wait(), processes, timeout, f"echo, {streams} stream(s)")
            failed = await _stop(processes)
        if failed:
            raise BenchError(f"echo, {streams} stream(s): a client failed: {failed[0]}")
        return _summary(streams, echo.samples, echo.start, echo.end)
    finally:
        await _stop(processes)
        await server.stop(0)


async def _echo_client(address: str, streams: int) -> None:
    """Open ``streams`` streams on one channel; send back every message until the end."""
    async with grpc.aio.insecure_channel(address) as channel:
        method: Any = channel.stream_stream(ECHO_METHOD)

        async def one() -> None:
            call = method()
            await call.write(b"hello")
            while (message := await call.read()) is not grpc.aio.EOF:
                await call.write(message)

        await asyncio.gather(*(one() for _ in range(streams)))


# -- both --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RefereeBench:
    """The referee runs, one per table count, and the echo runs at the same counts."""

    runs: tuple[LatencyRun, ...]
    echo: tuple[LatencyRun, ...]


def bench_referee(
    tables: Sequence[int] = (1, 64),
    *,
    deals: int | None = None,
    echo_trips: int = ECHO_TRIPS,
    timeout: float = 120.0,
) -> RefereeBench:
    """The echo, then the referee, at each table count; ``deals`` None sizes each run."""

    async def main() -> RefereeBench:
        echo = [await bench_echo(t, echo_trips, timeout=timeout) for t in tables]
        runs = [await bench_tables(t, deals or default_deals(t), timeout=timeout) for t in tables]
        return RefereeBench(tuple(runs), tuple(echo))

    return asyncio.run(main())


def _main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "echo-client":
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_echo_client(argv[1], int(argv[2])))
        return 0
    print("usage: python -m referee.bench_referee echo-client HOST:PORT STREAMS", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
