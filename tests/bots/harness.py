"""Running real matches on a real referee for the referee tests, and reading what came out.

Everything here is real: a referee on 127.0.0.1:0, bot processes started through
``cmd:`` entries (``tests/bots/scripted.py``), records written to files, and bot logs
of every message each process received and sent.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import shlex
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.engine.rules import Rules
from referee.entries import Entry, parse_entry
from referee.match.config import Limits, MatchConfig
from referee.match.faults import FaultPolicy
from referee.match.match import Match
from referee.match.results import MatchResult
from referee.records import verify_file
from referee.sandbox.bwrap import SandboxMode
from referee.service.server import Referee, start_referee
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc

SCRIPTED = Path(__file__).resolve().with_name("scripted.py")
FAST = Limits(deadline_ms=300, grace=0.5, connect_timeout=3, restart_crashed=False)
"""Short limits: a test match takes about a second. No restarts: one process per slot
for the whole match, so each log is one slot's (tests/test_bot_restart.py restarts)."""
NORMAL_ENDS = {"deals_played", "target_reached", "called_out"}

PUBLIC_EVENTS = {
    "play": "card_played",
    "trick": "trick_won",
    "declare": "declared",
    "bid": "bid_made",
    "call": "card_called",
    "split": "monte_split",
    "score": "deal_scored",
    "redeal": "deal_scored",
    "result": "game_over",
}
"""Record line type -> the event a spectator gets for it (other lines reach no spectator)."""

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 90) -> T:
    """Run a test's coroutine in a fresh event loop, with an upper bound on its time."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


@contextlib.asynccontextmanager
async def serving() -> AsyncIterator[Referee]:
    """A referee on a free local port, stopped at the end."""
    referee = await start_referee("127.0.0.1:0")
    try:
        yield referee
    finally:
        await referee.stop(0.5)


def scripted(mode: str, log_dir: Path, *args: str | int) -> Entry:
    """A ``cmd:`` entry running ``tests/bots/scripted.py --mode MODE``, logging to ``log_dir``.

    Unconfined (``sandbox = "off"``): it writes its log of every byte into ``log_dir`` on
    the host, which a sandbox forbids. tests/test_sandbox.py runs bots in the sandbox.
    """
    argv = [sys.executable, str(SCRIPTED), "--mode", mode, "--log-dir", str(log_dir)]
    argv += [str(a) for a in args]
    entry = parse_entry("cmd:" + shlex.join(argv))
    return dataclasses.replace(entry, sandbox=SandboxMode.OFF)


def limits(**changes: Any) -> Limits:
    """FAST with some fields changed."""
    values = {
        "deadline_ms": FAST.deadline_ms,
        "time_bank_ms": FAST.time_bank_ms,
        "max_attempts": FAST.max_attempts,
        "connect_timeout": FAST.connect_timeout,
        "grace": FAST.grace,
        "on_fault": FaultPolicy.FORFEIT,
        "restart_crashed": FAST.restart_crashed,
    }
    values.update(changes)
    return Limits(**values)


@dataclass
class Table:
    """One match that was played, and where its record is."""

    match: Match
    result: MatchResult
    record: Path

    def lines(self) -> list[dict[str, Any]]:
        """The record's lines, parsed."""
        return record_lines(self.record)

    def games(self) -> list[list[dict[str, Any]]]:
        """The record's lines, game by game."""
        return split_games(self.lines())

    def seat_of(self, slot: int, game: int) -> int:
        """The seat ``slot`` had in game ``game`` (from 1) of a one-set match."""
        seats = [link.slot for link in self.match.seating(game, game - 1)]
        return seats.index(slot)

    def verify(self) -> None:
        """The record verifies and holds every game of the match."""
        verified = verify_file(self.record)
        assert list(verified.outcomes) == self.result.outcomes


async def play(
    referee: Referee,
    entries: tuple[Entry, ...],
    record: Path,
    *,
    rules: Rules | None = None,
    seed: str = "faults",
    deals: int | None = 1,
    limits: Limits = FAST,
    on_ticket: Callable[[str, str], None] | None = None,
    on_match: Callable[[Match], None] | None = None,
) -> Table:
    """Play one match on ``referee``, its record written to ``record``."""
    config = MatchConfig(rules or Rules(), seed, entries, deals=deals, limits=limits)
    record.parent.mkdir(parents=True, exist_ok=True)
    with open(record, "w", encoding="utf-8", newline="\n") as stream:
        match = Match(
            referee,
            config,
            record=stream,
            workdir=record.with_suffix(".work"),
            on_ticket=on_ticket,
        )
        if on_match is not None:
            on_match(match)
        result = await match.run()
    return Table(match, result, record)


async def normal_table(referee: Referee, record: Path, seed: str = "bystander") -> Table:
    """A match between built-in random bots: the table next to a misbehaving one."""
    return await play(
        referee,
        (parse_entry("random"), parse_entry("random")),
        record,
        seed=seed,
        deals=1,
        limits=limits(deadline_ms=1000, connect_timeout=10),
    )


def assert_normal(table: Table) -> None:
    """Every game ended normally, nothing went wrong, and the record verifies."""
    assert [o.termination.value for o in table.result.outcomes] == ["deals_played"] * len(
        table.result.outcomes
    )
    assert table.result.incidents == []
    kinds = {line["type"] for line in table.lines()}
    assert not kinds & {"forfeit", "rejected", "incident"}, kinds
    table.verify()


async def health(address: str) -> int:
    """The referee's overall health status (``grpc.health.v1``)."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        response = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        return int(response.status)


async def assert_alive(referee: Referee) -> None:
    """The referee answers health checks and lists its tables."""
    assert await health(referee.address) == health_pb2.HealthCheckResponse.SERVING
    async with grpc.aio.insecure_channel(referee.address) as channel:
        stub = pb_grpc.SpectatorServiceStub(channel)
        await stub.ListTables(pb.ListTablesRequest(), timeout=5)


def record_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a record file, parsed."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def split_games(lines: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Record lines cut into games, at each ``game`` line."""
    games: list[list[dict[str, Any]]] = []
    for line in lines:
        if line["type"] == "game":
            games.append([])
        games[-1].append(line)
    return games


def of_type(lines: list[dict[str, Any]], kind: str, /, **fields: Any) -> list[dict[str, Any]]:
    """The lines of one type whose fields have the given values."""
    return [
        line
        for line in lines
        if line["type"] == kind and all(line.get(k) == v for k, v in fields.items())
    ]


@dataclass
class BotLog:
    """What one bot process (or in-test bot) received and sent, and how its stream ended."""

    ticket: str = ""
    env_seed: str | None = None
    received: list[pb.PlayResponse] = field(default_factory=list)
    raw_received: list[bytes] = field(default_factory=list)
    sent: list[pb.PlayRequest] = field(default_factory=list)
    statuses: list[tuple[str, str]] = field(default_factory=list)
    drops: int = 0
    order: list[tuple[str, Any]] = field(default_factory=list)
    """("recv", PlayResponse) and ("sent", PlayRequest), in the order they happened."""

    def add(self, item: dict[str, Any]) -> None:
        """Take one log item as ``scripted.py`` writes it."""
        kind = item["t"]
        if kind == "start":
            self.ticket = item["ticket"]
            self.env_seed = item["seed"]
        elif kind == "recv":
            raw = base64.b64decode(item["b64"])
            self.raw_received.append(raw)
            self.received.append(pb.PlayResponse.FromString(raw))
            self.order.append(("recv", self.received[-1]))
        elif kind == "sent":
            self.sent.append(pb.PlayRequest.FromString(base64.b64decode(item["b64"])))
            self.order.append(("sent", self.sent[-1]))
        elif kind == "status":
            self.statuses.append((item["code"], item["details"]))
        elif kind == "drop":
            self.drops += 1

    @property
    def slot(self) -> int | None:
        """The slot the Welcome named."""
        for event in self.events():
            if event.HasField("welcome"):
                return event.welcome.slot
        return None

    def events(self, kind: str | None = None) -> list[Any]:
        """Every event received, in order; with ``kind``, that oneof's messages only."""
        out = []
        for response in self.received:
            for event in response.events:
                if kind is None:
                    out.append(event)
                elif event.WhichOneof("event") == kind:
                    out.append(getattr(event, kind))
        return out

    def requests(self) -> list[pb.DecisionRequest]:
        """Every DecisionRequest received."""
        return [r.request for r in self.received if r.HasField("request")]

    def decisions(self) -> list[pb.Decision]:
        """Every Decision sent."""
        return [m.decision for m in self.sent if m.HasField("decision")]


def read_log(path: Path) -> BotLog:
    """One bot process's log, as ``scripted.py`` writes it."""
    log = BotLog()
    for line in path.read_text(encoding="utf-8").splitlines():
        log.add(json.loads(line))
    return log


def read_logs(log_dir: Path) -> dict[int, BotLog]:
    """The logs of every bot process that wrote to ``log_dir``, by slot."""
    logs: dict[int, BotLog] = {}
    for path in sorted(log_dir.glob("*.jsonl")):
        log = read_log(path)
        slot = log.slot
        assert slot is not None, f"{path} holds no Welcome"
        assert slot not in logs, f"two processes were welcomed as slot {slot}"
        logs[slot] = log
    return logs


def manifest(folder: Path, name: str, mode: str, log_dir: Path, *args: str | int) -> Entry:
    """A ``.toml`` bot manifest running ``scripted.py``, so the entry has the name given."""
    command = [sys.executable, str(SCRIPTED), "--mode", mode, "--log-dir", str(log_dir)]
    command += [str(a) for a in args]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{len(list(folder.glob('*.toml')))}.toml"
    text = f"name = {json.dumps(name, ensure_ascii=False)}\n"
    text += f"command = {json.dumps(command, ensure_ascii=False)}\n"
    text += 'sandbox = "off"  # it logs to a host folder\n'
    path.write_text(text, encoding="utf-8")
    return parse_entry(str(path))
