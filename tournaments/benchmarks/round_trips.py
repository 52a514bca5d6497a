"""The referee benchmark: decision round trips through the real referee, and a bare echo.

``bench_tables`` starts a referee on a free local port, opens ``tables`` matches of two
``remote`` entries each (four slots per match) and starts exactly four random-bot
processes (``python -m tavolo_bot.bots.random``): process k plays slot k of every table,
one stream per ticket. The round trips are the referee's own clock, ``Match(on_decision=
...)``: from just before ``Slot.send`` writes the request to when the ``Decision``
arrives in ``Slot._receive``. Only decisions answered after every bot stream has
connected count, and decisions per second is their number over the wall time from then
to the end of the last match. The CPU time of this process (the referee's) and of the
four bot processes over that same time is divided by those decisions too.

``bench_echo`` times the same exchange with nothing but ``grpc.aio``, on the server side:
the server writes a small message on a bidirectional stream and awaits its echo. Each
round trip is timed twice, from before the write (the full round trip) and from when the
write is done. The clients are separate processes: one for the bare echo, or four taking
turns, laid out like the bots of a referee run.

Every run uses the gRPC transport this process chose (``referee.grpc_transport.GRPC_EXPERIMENTS``).
``bench_echo_grpc_defaults`` runs the bare echo once more in a child process on gRPC's
default transport, for comparison.

Run as ``python -m tournaments.benchmarks.round_trips echo-client HOST:PORT STREAMS INDEX`` this
module is an echo client process; as ``... echo-run TRIPS SECONDS`` it runs a bare echo
and prints its figures as JSON.
"""

from __future__ import annotations

from referee.grpc_transport import TRANSPORT  # before grpc: it chooses its transport

# isort: split
import asyncio
import contextlib
import dataclasses
import json
import math
import os
import resource
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

from referee.engine.game_base import Termination
from referee.engine.registry import preset
from referee.engine.rules import Rules
from referee.entries import BUILT_IN_BOTS, Entry
from referee.match.config import Limits, MatchConfig
from referee.match.match import Match
from referee.match.slots import Slot
from referee.sandbox.bot_process import BotProcess, start_bot
from referee.service.server import Referee, start_referee

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
ECHO_CLIENT = (sys.executable, "-m", "tournaments.benchmarks.round_trips", "echo-client")
"""The echo client process; it takes the address, its stream count and its index."""
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
    processes: int = BOT_PROCESSES
    """Bot (or echo client) processes the streams were spread over."""
    after_write_p50_us: float | None = None
    """Echo only: the median from when the write is done to the echo."""
    after_write_p99_us: float | None = None
    referee_cpu_seconds: float = 0.0
    """Referee only: CPU time of this process (the referee's) over the play phase."""
    bot_cpu_seconds: float = 0.0
    """Referee only: CPU time of the bot processes together over the play phase."""

    @property
    def referee_cpu_us_per_decision(self) -> float:
        """The referee's CPU time per answered decision, in microseconds."""
        return self.referee_cpu_seconds / self.decisions * 1e6

    @property
    def bot_cpu_us_per_decision(self) -> float:
        """The bot processes' CPU time per answered decision, in microseconds."""
        return self.bot_cpu_seconds / self.decisions * 1e6


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


async def _stop(processes: Iterable[BotProcess], grace: float) -> list[str]:
    """Give every process ``grace`` seconds to exit, then kill it; reap it.

    Returns the exit notes of those that did not exit with status 0.
    """
    processes = list(processes)
    await asyncio.gather(*(p.stop(grace) for p in processes))
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
    work: Awaitable[Any],
    processes: Sequence[BotProcess],
    timeout: float,
    what: str,
    *,
    limit: float | None = None,
) -> Any:
    """Await ``work`` within ``timeout`` seconds; fail early if a process fails meanwhile.

    ``limit`` is the whole run's time limit that ``timeout`` is what is left of, if any.
    """
    task = asyncio.ensure_future(work)
    exits = {asyncio.ensure_future(p.process.wait()): p for p in processes}
    end = time.monotonic() + timeout
    try:
        while not task.done():
            left = end - time.monotonic()
            if left <= 0:
                raise BenchError(f"{what}: not done within {limit or timeout:g} s")
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
        waits = {task, *exits}
        for pending in waits:
            pending.cancel()
        await asyncio.wait(waits)
        for pending in waits:  # retrieved, so a failure here is not reported again
            if not pending.cancelled():
                pending.exception()


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of live process ``pid`` so far (all its threads)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        # The command name, field 2, is in parentheses and may hold spaces.
        fields = stat.read().rsplit(")", 1)[1].split()
    # utime and stime are fields 14 and 15 of proc(5); fields[0] is field 3.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_cpu_seconds() -> float:
    """User and system CPU time of this process's children that have been reaped."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# -- the referee -------------------------------------------------------------------------


def _keep_tickets(slots: list[str]) -> Callable[[str, str], None]:
    """An ``on_ticket`` that appends each ticket to ``slots``, in slot order."""

    def on_ticket(label: str, ticket: str) -> None:
        slots.append(ticket)

    return on_ticket


async def _open_tables(
    referee: Referee, config: MatchConfig, tables: int, on_decision: Callable[[float], None]
) -> tuple[list[Match], list[asyncio.Task[Any]], list[list[str]]]:
    """Start ``tables`` matches of ``config``; each one's remote tickets, once all are out."""
    tickets: list[list[str]] = []
    matches = []
    for _ in range(tables):
        slots: list[str] = []
        tickets.append(slots)
        matches.append(
            Match(referee, config, on_ticket=_keep_tickets(slots), on_decision=on_decision)
        )
    tasks = [asyncio.create_task(m.run()) for m in matches]
    # Each run() hands out its tickets before its first wait.
    while any(len(slots) < SLOTS for slots in tickets):
        for task in tasks:
            if task.done():
                task.result()  # raises what stopped the match
                raise BenchError(f"{tables} table(s): a match ended before it began")
        await asyncio.sleep(0)
    return matches, tasks, tickets


def _bot_env(address: str, tickets: list[list[str]], j: int, processes: int) -> dict[str, str]:
    """Bot process ``j`` plays slot ``k`` of every table for each ``k % processes == j``."""
    return {
        "TAVOLO_REFEREE": address,
        "TAVOLO_TICKET": ",".join(
            slots[k] for slots in tickets for k in range(j, SLOTS, processes)
        ),
        "TAVOLO_SEED": f"bench/{j}",
    }


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
        matches, tasks, tickets = await _open_tables(referee, config, tables, on_decision)
        links: list[Slot] = [link for m in matches for row in m.links for link in row]
        bot = Entry("random", command=(sys.executable, "-m", BUILT_IN_BOTS["random"]))
        with tempfile.TemporaryDirectory(prefix="tavolo-bench-") as root:
            children_cpu = _children_cpu_seconds()
            try:
                for j in range(processes):
                    env = _bot_env(referee.address, tickets, j, processes)
                    bots.append(await _start(bot, f"bot{j}", Path(root), env))
                await _until(
                    asyncio.gather(*(link.wait_connected(timeout) for link in links)),
                    bots,
                    deadline - clock(),
                    f"{tables} table(s): connecting the bots",
                    limit=timeout,
                )
                # The matches start on their own as soon as their slots connect, perhaps
                # before this task runs again: count from the last connection itself.
                start = max(link.connected_at for link in links)
                referee_cpu = time.process_time()
                bots_cpu = sum(_cpu_seconds(bot.process.pid) for bot in bots)
                results = await _until(
                    asyncio.gather(*tasks),
                    bots,
                    deadline - clock(),
                    f"{tables} table(s)",
                    limit=timeout,
                )
                end = clock()
                referee_cpu = time.process_time() - referee_cpu
                # After MatchOver every bot exits by itself.
                failed = await _stop(bots, _STOP_GRACE)
                # Reaped now, so their whole CPU time is in the children's usage, which
                # only they add to meanwhile (their exit is counted too: a few ms each).
                bots_cpu = _children_cpu_seconds() - children_cpu - bots_cpu
            finally:
                await _stop(bots, 0.0)  # on the way out after a failure: kill them now
        if failed:
            raise BenchError(f"{tables} table(s): a bot process failed: {failed[0]}")
        faults = sum(o.termination in _FAULTS for r in results for o in r.outcomes)
        run = _summary(tables, samples, start, end, deals=deals, faults=faults)
        return dataclasses.replace(run, referee_cpu_seconds=referee_cpu, bot_cpu_seconds=bots_cpu)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await referee.stop(0)


# -- the echo ----------------------------------------------------------------------------


class _EchoServer:
    """Groups of streams, one stream per client process, taking turns like a table's seats.

    Each group does ``trips`` timed round trips, the server writing to its streams in
    turn and awaiting each echo; groups run at once, like tables.
    """

    def __init__(self, groups: int, processes: int, trips: int) -> None:
        self.groups = groups
        self.processes = processes
        self.trips = trips
        self.members: list[list[Any]] = [[None] * processes for _ in range(groups)]
        self.joined = [0] * processes
        self.samples: list[tuple[float, float]] = []
        """(finish time, round trip) from before the write to the echo."""
        self.after_write: list[tuple[float, float]] = []
        """The same, from when the write is done (what the referee's clock covers)."""
        self.go = asyncio.Event()
        self.start = 0.0
        self.finished = 0
        self.done = asyncio.Event()
        self.end = 0.0

    async def echo(
        self, request_iterator: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        hello = await context.read()  # the client's process index opens the stream
        if hello is grpc.aio.EOF:
            return
        k = int(hello)
        group = self.joined[k]
        self.joined[k] += 1
        self.members[group][k] = context
        if sum(self.joined) == self.groups * self.processes:
            self.start = time.monotonic()
            self.go.set()
        await self.go.wait()
        if k == 0:
            await self._drive(self.members[group])
        await self.done.wait()  # the stream stays open until every group is done

    async def _drive(self, streams: list[Any]) -> None:
        clock, samples, count = time.monotonic, self.samples, len(streams)
        after_write = self.after_write
        try:
            for i in range(self.trips):
                stream = streams[i % count]
                started = clock()
                await stream.write(ECHO_PAYLOAD)
                written = clock()
                if await stream.read() is grpc.aio.EOF:
                    return
                done = clock()
                samples.append((done, done - started))
                after_write.append((done, done - written))
        finally:
            self.finished += 1
            if self.finished == self.groups:
                self.end = clock()
                self.done.set()


async def bench_echo(
    tables: int, trips: int, *, processes: int = BOT_PROCESSES, timeout: float = 120.0
) -> LatencyRun:
    """``trips`` echo round trips in all, over ``tables`` groups of streams at once.

    Each of ``processes`` client processes opens one stream per group; a group's streams
    take turns, as the seats of a table do. ``processes=1`` is the bare echo: one client,
    one stream per group.
    """
    per_group = max(1, trips // tables)
    echo = _EchoServer(tables, processes, per_group)
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(echo.echo)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(ECHO_METHOD.split("/")[1], {"Echo": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    clients: list[BotProcess] = []
    what = f"echo, {tables} group(s) of {processes} process(es)"
    try:
        with tempfile.TemporaryDirectory(prefix="tavolo-bench-") as root:
            try:
                for k in range(processes):
                    command = (*ECHO_CLIENT, f"127.0.0.1:{port}", str(tables), str(k))
                    clients.append(
                        await _start(Entry("echo", command=command), f"echo{k}", Path(root), {})
                    )
                await _until(echo.done.wait(), clients, timeout, what)
                failed = await _stop(clients, _STOP_GRACE)
            finally:
                await _stop(clients, 0.0)
        if failed:
            raise BenchError(f"{what}: a client failed: {failed[0]}")
        run = _summary(tables, echo.samples, echo.start, echo.end)
        after_write = _summary(tables, echo.after_write, echo.start, echo.end)
        return dataclasses.replace(
            run,
            processes=processes,
            after_write_p50_us=after_write.p50_us,
            after_write_p99_us=after_write.p99_us,
        )
    finally:
        await server.stop(0)


async def _echo_client(address: str, streams: int, index: int) -> None:
    """Open ``streams`` streams on one channel; send back every message until the end."""
    async with grpc.aio.insecure_channel(address) as channel:
        method: Any = channel.stream_stream(ECHO_METHOD)

        async def one() -> None:
            call = method()
            await call.write(str(index).encode())
            while (message := await call.read()) is not grpc.aio.EOF:
                await call.write(message)

        await asyncio.gather(*(one() for _ in range(streams)))


# -- both --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RefereeBench:
    """The referee runs, one per table count, and the echo runs to compare them with."""

    runs: tuple[LatencyRun, ...]
    echo: LatencyRun
    """The bare echo: one stream of one client process."""
    echo_tables: tuple[LatencyRun, ...]
    """The echo laid out like each referee run: four client processes taking turns."""
    transport: str
    """``GRPC_EXPERIMENTS`` of every run above; empty for gRPC's defaults."""
    echo_grpc_defaults: LatencyRun | None = None
    """The bare echo on gRPC's default transport; None when that is the transport above."""
    rounds: tuple[Round, ...] = ()
    """The p50s of each round: the bare echoes and the referee at the fewest tables, run
    one after the other, so that the machine's slow drift cancels in each round's ratios.
    ``runs[0]``, ``echo`` and ``echo_grpc_defaults`` are the rounds with the median p50."""


@dataclass(frozen=True)
class Round:
    """One round's p50s, in microseconds."""

    referee: float
    echo: float
    echo_grpc_defaults: float | None


def median_run(runs: Sequence[LatencyRun]) -> LatencyRun:
    """The run with the median p50 (the lower middle one of an even count)."""
    return sorted(runs, key=lambda run: run.p50_us)[(len(runs) - 1) // 2]


async def bench_echo_grpc_defaults(trips: int, *, timeout: float = 120.0) -> LatencyRun:
    """The bare echo in a child process whose gRPC, and its clients', runs on its defaults.

    gRPC reads its transport once per process, so the comparison needs a process of its own.
    """
    env = {**os.environ, "GRPC_EXPERIMENTS": ""}
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tournaments.benchmarks.round_trips", "echo-run",
        str(trips), str(timeout),
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(child.communicate(), timeout + 30)
    except TimeoutError:
        child.kill()
        await child.wait()
        raise BenchError(f"echo on gRPC's defaults: not done within {timeout:g} s") from None
    if child.returncode != 0:
        tail = "\n".join(err.decode(errors="replace").splitlines()[-5:])
        raise BenchError(f"echo on gRPC's defaults: exit status {child.returncode}: {tail}")
    return LatencyRun(**json.loads(out))


def bench_referee(
    tables: Sequence[int] = (1, 64),
    *,
    deals: int | None = None,
    echo_trips: int = ECHO_TRIPS,
    timeout: float = 120.0,
    rounds: int = 3,
) -> RefereeBench:
    """Rounds of the bare echoes and the referee at the fewest tables, then the echo laid
    out like each table count and the referee at the other counts; ``deals`` None sizes
    each run."""
    fewest = min(tables)

    async def main() -> RefereeBench:
        bares: list[LatencyRun] = []
        defaults: list[LatencyRun] = []
        ones: list[LatencyRun] = []
        for _ in range(rounds):
            bares.append(await bench_echo(1, echo_trips, processes=1, timeout=timeout))
            if TRANSPORT:
                defaults.append(await bench_echo_grpc_defaults(echo_trips, timeout=timeout))
            ones.append(await bench_tables(fewest, deals or default_deals(fewest), timeout=timeout))
        echo = [await bench_echo(t, echo_trips, timeout=timeout) for t in tables]
        runs = [
            median_run(ones) if t == fewest else
            await bench_tables(t, deals or default_deals(t), timeout=timeout)
            for t in tables
        ]  # fmt: skip
        per_round = tuple(
            Round(one.p50_us, bare.p50_us, defaults[i].p50_us if defaults else None)
            for i, (one, bare) in enumerate(zip(ones, bares, strict=True))
        )
        return RefereeBench(
            tuple(runs),
            median_run(bares),
            tuple(echo),
            TRANSPORT,
            median_run(defaults) if defaults else None,
            per_round,
        )

    return asyncio.run(main())


def _main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[0] == "echo-client":
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_echo_client(argv[1], int(argv[2]), int(argv[3])))
        return 0
    if len(argv) == 3 and argv[0] == "echo-run":
        run = asyncio.run(bench_echo(1, int(argv[1]), processes=1, timeout=float(argv[2])))
        print(json.dumps(dataclasses.asdict(run)))
        return 0
    print(
        "usage: python -m tournaments.benchmarks.round_trips echo-client HOST:PORT STREAMS INDEX\n"
        "       python -m tournaments.benchmarks.round_trips echo-run TRIPS SECONDS",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
