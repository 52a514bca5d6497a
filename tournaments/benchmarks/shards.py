"""``tavolo bench referee --shards N``: decisions/s over one shard and over N, and many
streams at once.

The load generator is what a new user could write from docs/protocol.md: matches created
with ``MatchService.CreateMatch`` on a real ``tavolo serve`` subprocess, one stream per
ticket, every request answered at once with its first legal action. Since it never waits,
every game that ends by a timeout is a spurious timeout. There are two, the same load:
``python``, one process of grpc.aio streams (this module), and ``go``
(``go_load_generator/``, built on demand with the Go SDK's messages), which costs a
fraction of the CPU, so that on a machine it shares with the shards the bench measures the
referee rather than its load.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import hashlib
import json
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tabulate import tabulate

from referee.protocol import PROTOCOL_VERSION
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc
from tournaments.benchmarks.round_trips import BenchError

SERVE_START_SECONDS = 60.0
"""How long ``tavolo serve`` may take to print its address and serve."""
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
SERVE_COMMAND = "from tournaments.cli.main import app; app(prog_name='tavolo')"
"""``tavolo serve`` run by this Python, whatever the ``tavolo`` script on PATH."""
SDK = Path("clients") / "python"
"""A checkout's Python SDK folder, which holds the protocol's generated code."""
RATIO_TARGET = 1.7
"""Decisions/s on N shards over one shard, on this 2-core machine: at least this."""
THROUGHPUT_TABLES = 64
STREAM_TABLES = 250
"""Tables of the many-streams phase: 1,000 streams."""
GENERATORS = ("go", "python")
GO_SOURCES = Path(__file__).parent / "go_load_generator"
"""The Go load generator's module (it uses the Go SDK's messages, ``clients/go``)."""
GO_BUILD_SECONDS = 300.0


@dataclass(frozen=True)
class LoadSettings:
    """One load: ``tables`` Tressette matches of two remote entries, four streams each."""

    tables: int
    deals: int
    """Deals per game; each match plays two games."""
    deadline_ms: int = 200
    connect_timeout: float = 20.0
    """The connection window of every match, counted from its CreateMatch."""
    compact: bool = False
    """Whether the streams ask for compact observations (Hello.compact_observations)."""
    seconds: float = 300.0
    """Give up on the load after this long."""
    generator: str = "python"
    """``python`` (this process's grpc.aio streams) or ``go`` (:func:`go_generator`)."""


@dataclass
class LoadRun:
    """What one load on one ``tavolo serve --shards N`` gave."""

    shards: int
    tables: int
    streams: int
    deadline_ms: int
    connected: int
    """Streams welcomed by the referee."""
    never_connected: int
    refused: dict[str, int]
    """Streams ended with an error before their Welcome, by status code and details."""
    broken: dict[str, int]
    """Streams welcomed, then ended with an error (not the OK of their match's end)."""
    decisions: int
    """Requests answered, over every stream."""
    seconds: float
    """From the first answer to the last."""
    games: int
    terminations: dict[str, int]
    """Games by how they ended."""
    matches_by_status: dict[str, int]
    referee_cpu_seconds: float
    """CPU time of the ``tavolo serve`` process and its shards over the load."""
    generator_cpu_seconds: float
    """CPU time of the load generator (this process) over the load."""
    connect_seconds_max: float
    """The longest wait of a stream, from its match's CreateMatch to its Welcome."""
    addresses: int
    """Distinct referee addresses the streams connected to (CreateMatch's ``referee``)."""
    answer_ms: list[int] = field(default_factory=list)
    """Every answer's time as the referee took it, from its records (``"ms"``): from the
    request's write to the answer's arrival."""
    generator_lag_ms: list[float] = field(default_factory=list)
    """How late the load generator's 10 ms timer ran, each time (the Python generator's
    loop, or a goroutine of the Go generator's): what it adds to answers."""
    generator: str = "python"

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.seconds if self.seconds > 0 else 0.0

    @property
    def spurious_timeouts(self) -> int:
        """Games ended by a timeout: the load generator answers at once."""
        return self.terminations.get("timeout", 0)

    @property
    def cpu_us_per_decision(self) -> float:
        return self.referee_cpu_seconds / self.decisions * 1e6 if self.decisions else 0.0

    @property
    def generator_us_per_decision(self) -> float:
        return self.generator_cpu_seconds / self.decisions * 1e6 if self.decisions else 0.0

    def as_json(self) -> dict[str, object]:
        """The run's figures, rounded, for ``--json``."""
        return {
            "generator": self.generator,
            "shards": self.shards,
            "tables": self.tables,
            "streams": self.streams,
            "deadline_ms": self.deadline_ms,
            "connected": self.connected,
            "never_connected": self.never_connected,
            "refused": self.refused,
            "broken": self.broken,
            "decisions": self.decisions,
            "seconds": round(self.seconds, 3),
            "decisions_per_second": round(self.decisions_per_second, 1),
            "games": self.games,
            "terminations": self.terminations,
            "spurious_timeouts": self.spurious_timeouts,
            "matches": self.matches_by_status,
            "referee_cpu_seconds": round(self.referee_cpu_seconds, 3),
            "referee_cpu_us_per_decision": round(self.cpu_us_per_decision, 1),
            "generator_cpu_seconds": round(self.generator_cpu_seconds, 3),
            "generator_cpu_us_per_decision": round(self.generator_us_per_decision, 1),
            "connect_seconds_max": round(self.connect_seconds_max, 3),
            "addresses": self.addresses,
            "answer_ms_p50": _percentile(self.answer_ms, 50),
            "answer_ms_p99": _percentile(self.answer_ms, 99),
            "answer_ms_max": max(self.answer_ms, default=0),
            "generator_lag_ms_p99": round(_percentile(self.generator_lag_ms, 99), 1),
            "generator_lag_ms_max": round(max(self.generator_lag_ms, default=0.0), 1),
        }


@dataclass
class _Streams:
    """What the load generator's streams saw."""

    connected: int = 0
    decisions: int = 0
    first_answer: float = 0.0
    last_answer: float = 0.0
    refused: Counter[str] = field(default_factory=Counter)
    broken: Counter[str] = field(default_factory=Counter)
    connect_max: float = 0.0


class ServeProcess:
    """A real ``tavolo serve`` subprocess on a free local port, bots unconfined.

    ``tree``: run the ``tavolo serve`` of that checkout instead of this one's (with this
    Python and its packages), to compare two builds on the same hour.
    """

    def __init__(
        self, shards: int, folder: Path, connect_timeout: float, tree: Path | None = None
    ) -> None:
        self.token = secrets.token_urlsafe(18)
        self.folder = folder
        self._out = folder / "serve.out"
        self._err = folder / "serve.err"
        args = ["serve", "--listen", "127.0.0.1:0", "--records", str(folder / "records"),
                "--sandbox", "off", "--connect-timeout", f"{connect_timeout:g}"]  # fmt: skip
        env = {**os.environ, "TAVOLO_ADMIN_TOKEN": self.token}
        cwd = None
        if tree is not None:
            has_shards = serve_tree_has_shards(tree)
            if not has_shards and shards != 1:
                raise BenchError(f"{tree}: its tavolo serve has no --shards, so only 1 shard")
            if has_shards:
                args += ["--shards", str(shards)]
            # The tree first, before this checkout (python -c puts the working directory
            # ahead of PYTHONPATH, hence both), with its SDK: its generated code is there.
            cwd, env["PYTHONPATH"] = tree, os.pathsep.join([str(tree), str(tree / SDK)])
        else:
            args += ["--shards", str(shards)]
        with self._out.open("wb") as out, self._err.open("wb") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-c", SERVE_COMMAND, *args],
                env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=cwd,
            )  # fmt: skip
        self.address = ""

    async def ready(self) -> str:
        """Wait until it prints its address and serves; that address."""
        end = time.monotonic() + SERVE_START_SECONDS
        while time.monotonic() < end:
            if self.process.poll() is not None:
                raise BenchError(
                    f"tavolo serve exited with {self.process.returncode}: {self.stderr_tail()}"
                )
            for line in self._out.read_text(errors="replace").splitlines():
                if line.startswith("tavolo referee on "):
                    self.address = line.split()[3]
            if self.address:
                async with grpc.aio.insecure_channel(self.address) as channel:
                    health: Any = health_pb2_grpc.HealthStub(channel)
                    try:
                        answer = await health.Check(
                            health_pb2.HealthCheckRequest(service="tavolo.v1.RefereeService"),
                            timeout=5,
                        )
                    except grpc.aio.AioRpcError:
                        answer = None
                if answer is not None and answer.status == health_pb2.HealthCheckResponse.SERVING:
                    return self.address
            await asyncio.sleep(0.1)
        raise BenchError(
            f"tavolo serve did not serve within {SERVE_START_SECONDS:g} s: {self.stderr_tail()}"
        )

    def stderr_tail(self) -> str:
        lines = self._err.read_text(errors="replace").strip().splitlines()
        return " | ".join(lines[-5:]) or "(no stderr)"

    def cpu_seconds(self) -> float:
        """CPU time so far of the process and of every descendant alive now."""
        return sum(_cpu_seconds(pid) for pid in _descendants(self.process.pid))

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL after 20 s) and reap it."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _descendants(root: int) -> list[int]:
    """``root`` and every process below it, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _percentile(values: list[int] | list[float], p: int) -> float:
    """The p-th percentile (nearest rank); 0 for no values."""
    if not values:
        return 0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, len(ordered) * p // 100)]


def _answer_times(records: Path) -> list[int]:
    """Every answer's ``"ms"`` in the records of ``records``."""
    times = []
    for path in records.glob("*.jsonl"):
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                if '"ms":' in line:
                    times.append(int(json.loads(line)["ms"]))
    return times


async def _watch_lag(lags: list[float], every: float = 0.01) -> None:
    """Note how late this loop runs, every ``every`` seconds, until cancelled."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + every
        await asyncio.sleep(every)
        lags.append((loop.time() - due) * 1000)


def _own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cpu_seconds(pid: int) -> float:
    """utime + stime of a process, 0 if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND


async def _seat(
    channel: grpc.aio.Channel, ticket: str, created: float, compact: bool, seen: _Streams
) -> None:
    """One bot stream: Hello, then the first legal action for every request, at once."""
    call = pb_grpc.RefereeServiceStub(channel).Play()  # type: ignore[no-untyped-call]
    hello = pb.Hello(ticket=ticket, protocol_version=PROTOCOL_VERSION, compact_observations=compact)
    welcomed = False
    try:
        await call.write(pb.PlayRequest(hello=hello))
        while (response := await call.read()) is not grpc.aio.EOF:
            if not welcomed:
                welcomed = True
                seen.connected += 1
                seen.connect_max = max(seen.connect_max, time.monotonic() - created)
            if response.HasField("request"):
                request = response.request
                decision = pb.Decision(
                    request_id=request.request_id, action_id=request.legal_actions[0].id
                )
                await call.write(pb.PlayRequest(decision=decision))
                now = time.monotonic()
                seen.decisions += 1
                seen.first_answer = seen.first_answer or now
                seen.last_answer = now
    except grpc.aio.AioRpcError as exc:
        (seen.broken if welcomed else seen.refused)[f"{exc.code().name}: {exc.details()}"] += 1


async def run_load(serve: ServeProcess, shards: int, settings: LoadSettings) -> LoadRun:
    """Create ``settings.tables`` matches on ``serve`` and play every stream to the end,
    with ``settings.generator``."""
    front = await serve.ready()
    if settings.generator == "go":
        binary = await asyncio.to_thread(go_generator)
        cpu_before = serve.cpu_seconds()
        seen, match_ids, addresses, own, lags = await _go_streams(
            binary, front, serve.token, settings
        )
    else:
        cpu_before = serve.cpu_seconds()
        own_before = _own_cpu_seconds()
        lags = []
        watch = asyncio.ensure_future(_watch_lag(lags))
        try:
            seen, match_ids, addresses = await _python_streams(front, serve.token, settings)
        finally:
            watch.cancel()
        own = _own_cpu_seconds() - own_before
    cpu = serve.cpu_seconds() - cpu_before
    statuses: Counter[str] = Counter()
    terminations: Counter[str] = Counter()
    async with grpc.aio.insecure_channel(front) as admin:
        stub = pb_grpc.MatchServiceStub(admin)  # type: ignore[no-untyped-call]
        for match_id in match_ids:
            status = await _final_status(stub, serve.token, match_id)
            statuses[status.status] += 1
            if status.result_json:
                for game in json.loads(status.result_json)["games"]:
                    terminations[game["termination"]] += 1
    streams = 4 * settings.tables
    return LoadRun(
        shards=shards,
        tables=settings.tables,
        streams=streams,
        deadline_ms=settings.deadline_ms,
        connected=seen.connected,
        never_connected=streams - seen.connected,
        refused=dict(seen.refused),
        broken=dict(seen.broken),
        decisions=seen.decisions,
        seconds=seen.last_answer - seen.first_answer,
        games=sum(terminations.values()),
        terminations=dict(terminations),
        matches_by_status=dict(statuses),
        referee_cpu_seconds=cpu,
        generator_cpu_seconds=own,
        connect_seconds_max=seen.connect_max,
        addresses=addresses,
        answer_ms=_answer_times(serve.folder / "records"),
        generator_lag_ms=lags,
        generator=settings.generator,
    )


def _create_request(serve_token: str, settings: LoadSettings, t: int) -> pb.CreateMatchRequest:
    return pb.CreateMatchRequest(
        admin_token=serve_token, entries=["remote", "remote"], game="tressette",
        seed=f"bench-shards-{t}", deals=settings.deals, deadline_ms=settings.deadline_ms,
        connect_timeout_ms=round(settings.connect_timeout * 1000),
    )  # fmt: skip


async def _python_streams(
    front: str, token: str, settings: LoadSettings
) -> tuple[_Streams, list[str], int]:
    """The load in this process: what the streams saw, the match ids, the addresses."""
    channels: dict[str, grpc.aio.Channel] = {}
    seen = _Streams()
    try:
        async with grpc.aio.insecure_channel(front) as admin:
            stub = pb_grpc.MatchServiceStub(admin)  # type: ignore[no-untyped-call]
            # Every match first, then every stream at once, as a user handing out the
            # tickets of a whole round would.
            created_matches: list[tuple[float, pb.CreateMatchResponse]] = []
            for t in range(settings.tables):
                created = time.monotonic()
                response = await stub.CreateMatch(_create_request(token, settings, t), timeout=30)
                created_matches.append((created, response))
        seats: list[asyncio.Task[None]] = []
        for created, response in created_matches:
            if response.referee not in channels:
                channels[response.referee] = grpc.aio.insecure_channel(response.referee)
            channel = channels[response.referee]
            seats += [
                asyncio.ensure_future(
                    _seat(channel, ticket.ticket, created, settings.compact, seen)
                )
                for ticket in response.tickets
            ]
        try:
            await asyncio.wait_for(asyncio.gather(*seats), settings.seconds)
        except TimeoutError:
            raise BenchError(
                f"{settings.tables} tables did not finish within {settings.seconds:g} s"
            ) from None
    finally:
        for channel in channels.values():
            await channel.close()
    return seen, [r.match_id for _, r in created_matches], len(channels)


def _go_digest() -> str:
    """A digest of the Go generator's sources and of the Go SDK's messages it uses."""
    digest = hashlib.sha256()
    sdk = GO_SOURCES.parent.parent.parent / "clients" / "go"
    files = [*sorted(GO_SOURCES.glob("*.go")), GO_SOURCES / "go.mod", GO_SOURCES / "go.sum"]
    files += [*sorted((sdk / "gen").rglob("*.go")), sdk / "go.mod"]
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def go_generator() -> Path:
    """The Go load generator's binary, built now if its sources changed since the last
    build (in the user's cache folder). BenchError, one line, if it cannot be built."""
    if shutil.which("go") is None:
        raise BenchError(
            "--generator go: no go toolchain on PATH; install Go, or use --generator python"
        )
    if not (GO_SOURCES / "main.go").exists():
        raise BenchError(
            f"--generator go: its sources are not at {GO_SOURCES} (an installed tavolo has "
            "none: run from a clone), or use --generator python"
        )
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tavolo"
    binary = cache / f"go-load-generator-{_go_digest()}"
    if binary.exists():
        return binary
    cache.mkdir(parents=True, exist_ok=True)
    partial = binary.with_name(binary.name + f".{os.getpid()}.partial")
    try:
        done = subprocess.run(
            ["go", "build", "-o", str(partial), "."],
            cwd=GO_SOURCES, capture_output=True, text=True, timeout=GO_BUILD_SECONDS, check=False,
            env={**os.environ, "GOTOOLCHAIN": "local"},
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise BenchError(f"--generator go: go build took over {GO_BUILD_SECONDS:g} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise BenchError(f"--generator go: go build in {GO_SOURCES} failed: {last}")
    partial.replace(binary)  # whole or not at all, should two benches build at once
    return binary


async def _go_streams(
    binary: Path, front: str, token: str, settings: LoadSettings
) -> tuple[_Streams, list[str], int, float, list[float]]:
    """The load in a Go process: what the streams saw, the match ids, the addresses, the
    process's CPU time, and how late its 10 ms timer ran."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = await asyncio.create_subprocess_exec(
        str(binary), "-front", front, "-tables", str(settings.tables),
        "-deals", str(settings.deals), "-deadline-ms", str(settings.deadline_ms),
        "-connect-timeout-ms", str(round(settings.connect_timeout * 1000)),
        f"-compact={'true' if settings.compact else 'false'}",
        "-seconds", f"{settings.seconds:g}", "-protocol-version", str(PROTOCOL_VERSION),
        env={**os.environ, "TAVOLO_ADMIN_TOKEN": token},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await child.communicate()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    try:
        found: dict[str, Any] = json.loads(out)
    except json.JSONDecodeError:
        tail = " | ".join(err.decode(errors="replace").strip().splitlines()[-3:])
        raise BenchError(
            f"the Go load generator exited with {child.returncode} and no report: {tail}"
        ) from None
    if found.get("error"):
        raise BenchError(f"the Go load generator: {found['error']}")
    seen = _Streams(
        connected=found["connected"],
        decisions=found["decisions"],
        first_answer=found["first_answer"],
        last_answer=found["last_answer"],
        refused=Counter(found["refused"]),
        broken=Counter(found["broken"]),
        connect_max=found["connect_seconds_max"],
    )
    lags = [float(lag) for lag in found["lag_ms"]]
    return seen, list(found["match_ids"]), found["addresses"], cpu, lags


async def _final_status(
    stub: pb_grpc.MatchServiceStub, token: str, match_id: str
) -> pb.GetMatchResponse:
    """The match's status once it is over (its streams have all ended by then, or soon)."""
    for _ in range(600):
        status: pb.GetMatchResponse = await stub.GetMatch(
            pb.GetMatchRequest(admin_token=token, match_id=match_id), timeout=10
        )
        if status.status in ("done", "failed"):
            return status
        await asyncio.sleep(0.05)
    raise BenchError(f"match {match_id} is still {status.status!r} after its streams ended")


def serve_tree_has_shards(tree: Path) -> bool:
    """Whether the checkout ``tree``'s ``tavolo serve`` takes ``--shards``; BenchError if
    ``tree`` is not a tavolo checkout."""
    serve = tree / "tournaments" / "cli" / "serve.py"
    generated = tree / SDK / "tavolo_bot" / "proto" / "referee_pb2.py"
    if not serve.is_file() or not generated.is_file():
        raise BenchError(
            f"{tree}: not a tavolo checkout with its generated code "
            f"(tournaments/cli/serve.py and {SDK}/tavolo_bot/proto/referee_pb2.py)"
        )
    return "shards" in serve.read_text(encoding="utf-8")


def load_once(shards: int, settings: LoadSettings, tree: Path | None = None) -> LoadRun:
    """Start ``tavolo serve --shards N`` (of checkout ``tree``, if given), run one load on
    it, stop it."""
    with tempfile.TemporaryDirectory(prefix="tavolo-bench-shards-") as folder:
        serve = ServeProcess(shards, Path(folder), settings.connect_timeout, tree)
        try:
            return asyncio.run(run_load(serve, shards, settings))
        finally:
            serve.stop()


@dataclass
class ShardsBench:
    """One run of ``tavolo bench referee --shards N``."""

    one: LoadRun
    many: LoadRun | None
    """None with ``--shards 1``: only the one-shard run, and the streams on it."""
    streams: LoadRun

    @property
    def ratio(self) -> float | None:
        """Decisions/s on N shards over one shard."""
        one = self.one.decisions_per_second
        if self.many is None or not one:
            return None
        return self.many.decisions_per_second / one

    def as_json(self) -> dict[str, object]:
        ratio = self.ratio
        return {
            "benchmark": "referee_shards",
            "shards": self.streams.shards,
            "transport": {"GRPC_EXPERIMENTS": os.environ.get("GRPC_EXPERIMENTS", "")},
            "one_shard": self.one.as_json(),
            "n_shards": None if self.many is None else self.many.as_json(),
            "ratio": None if ratio is None else round(ratio, 2),
            "ratio_target": RATIO_TARGET,
            "streams": self.streams.as_json(),
            "cpus": os.cpu_count(),
            "generator": self.one.generator,
        }

    def text(self) -> str:
        """The figures as a table and three lines, for a reader."""
        headers = [
            "phase", "shards", "tables", "streams", "never connected", "spurious timeouts",
            "decisions", "decisions/s", "answer ms p50/p99", "generator lag ms p99",
            "referee CPU µs/decision", "generator CPU µs/decision",
        ]  # fmt: skip
        rows = [
            [
                phase,
                run.shards,
                run.tables,
                run.streams,
                run.never_connected,
                run.spurious_timeouts,
                f"{run.decisions:,}",
                f"{run.decisions_per_second:,.0f}",
                f"{_percentile(run.answer_ms, 50)} / {_percentile(run.answer_ms, 99)}",
                f"{_percentile(run.generator_lag_ms, 99):.1f}",
                f"{run.cpu_us_per_decision:,.0f}",
                f"{run.generator_us_per_decision:,.0f}",
            ]
            for phase, run in self._runs()
        ]
        lines = [
            f"load generator: {self.one.generator}",
            tabulate(rows, headers=headers, colalign=("left", *["right"] * 11)),
            "",
        ]
        if self.many is not None and self.ratio is not None:
            lines.append(
                f"{self.many.shards} shards over 1: {self.ratio:.2f} × the decisions/s "
                f"(target >= {RATIO_TARGET:g} on 2 cores)"
            )
        lines += [
            f"{self.streams.streams:,} streams on {self.streams.shards} "
            f"shard{'s' if self.streams.shards > 1 else ''} at "
            f"{self.streams.deadline_ms} ms: {self.streams.never_connected} never connected, "
            f"{self.streams.spurious_timeouts} spurious timeouts (target 0)",
        ]
        odd = [
            f"{phase}: {run.matches_by_status} matches, streams refused {run.refused}, "
            f"broken {run.broken}"
            for phase, run in self._runs()
            if run.refused or run.broken or set(run.matches_by_status) != {"done"}
        ]  # fmt: skip
        return "\n".join(lines + [f"warning: {line}" for line in odd])

    def _runs(self) -> list[tuple[str, LoadRun]]:
        runs = [("throughput", self.one)]
        if self.many is not None:
            runs.append(("throughput", self.many))
        return [*runs, ("many streams", self.streams)]


def default_generator() -> str:
    """``go`` where the go toolchain and the generator's sources are here, else ``python``."""
    return "go" if shutil.which("go") and (GO_SOURCES / "main.go").exists() else "python"


def bench_shards(
    shards: int,
    *,
    tables: int = THROUGHPUT_TABLES,
    stream_tables: int = STREAM_TABLES,
    deals: int | None = None,
    seconds: float = 300.0,
    compact: bool = True,
    generator: str | None = None,
) -> ShardsBench:
    """Decisions/s on one shard, then on ``shards`` (if more than 1), at ``tables``
    tables; then ``stream_tables`` tables (four streams each) on ``shards`` at a 200 ms
    deadline."""
    generator = generator or default_generator()
    if generator not in GENERATORS:
        raise BenchError(f"--generator {generator}: choose one of {', '.join(GENERATORS)}")
    if generator == "go":
        go_generator()  # built, or one line saying why not, before any serve starts
    throughput = LoadSettings(tables, deals or 4, compact=compact, seconds=seconds,
                              generator=generator)  # fmt: skip
    streams = LoadSettings(stream_tables, deals or 2, compact=compact, seconds=seconds,
                           generator=generator)  # fmt: skip
    one = load_once(1, throughput)
    many = load_once(shards, throughput) if shards > 1 else None
    return ShardsBench(one, many, load_once(shards, streams))
