"""One referee shard: a child process of a :class:`referee.shard_pool.ShardPool`.

Run as ``python -m referee.shard_worker FD``: FD is its end of a socketpair to the head.
It starts a referee of its own, then plays what the head sends until the head says
:class:`~referee.shard_messages.Quit` or goes away. The messages, both ways, and their
wire are :mod:`referee.shard_messages`.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import itertools
import os
import pickle
import socket
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee import shard_messages as msg
from referee.match.config import MatchConfig
from referee.match.match import Match
from referee.match.results import DealReport, GameReport
from referee.sandbox.bot_process import LogBudget
from referee.sandbox.rlimits import die_with_parent
from referee.service.feeds import TableFeed
from referee.service.server import Referee, start_referee
from referee.shard_messages import frame, read_message
from tavolo_bot.proto import referee_pb2 as pb


class _Outbox:
    """What goes to the head, in order, one write per turn of the event loop."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._pending: list[msg.FromShard] = []

    def send(self, message: msg.FromShard) -> None:
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending.append(message)

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        if not self._writer.is_closing():
            self._writer.write(frame(msg.Batch(batch)))


class _Mirror:
    """Tells the head of every table of this shard, and sends the events of the tables it
    follows, as spectators see them: every event of every table would cost the head as
    much as the play itself."""

    def __init__(self, outbox: _Outbox, feeds: dict[str, TableFeed]) -> None:
        self._outbox = outbox
        self._feeds = feeds
        self._followed: set[str] = set()
        self._games: dict[str, int] = {}

    def table(self, feed: TableFeed) -> None:
        self._outbox.send(msg.TableOpened(feed.table_id, feed.match_id, list(feed.entries)))

    def event(self, feed: TableFeed, event: pb.Event) -> None:
        table = feed.table_id
        if self._games.get(table) != feed.game:
            self._games[table] = feed.game
            self._outbox.send(msg.GameOf(table, feed.game))
        if table in self._followed:
            self._outbox.send(msg.TableEvent(table, event.SerializeToString()))

    def closed(self, feed: TableFeed) -> None:
        self._games.pop(feed.table_id, None)
        self._followed.discard(feed.table_id)
        self._outbox.send(msg.TableClosed(feed.table_id))

    def follow(self, table: str) -> None:
        """Send the table's history, then each of its events as it happens."""
        feed = self._feeds.get(table)
        history = [] if feed is None else [e.SerializeToString() for e in feed.history]
        self._outbox.send(msg.History(table, history))
        if feed is not None and not feed.done:
            self._followed.add(table)


LOG_CHUNK = 256 * 2**10
"""Bytes of logs a shard borrows from its head at a time, at least."""


class BorrowedLogs(LogBudget):
    """A shard's side of its head's one logs budget: bytes borrowed from the head as its
    bots' logs need them, so the shards share the whole cap rather than a share each."""

    def __init__(self, outbox: _Outbox, total_mb: int) -> None:
        """The head's cap is ``total_mb``; nothing is borrowed yet."""
        super().__init__(total_mb, used=total_mb * 2**20)
        self._outbox = outbox
        self._lock = asyncio.Lock()
        self._asks = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[int]] = {}
        self._spent = False
        """The head had nothing more to lend: its budget is spent for good."""

    async def grant(self, wanted: int) -> int:
        # One ask at a time: copiers that wait meanwhile take from what it brings.
        async with self._lock:
            if self.left < wanted and not self._spent:
                ask = next(self._asks)
                answer = self._waiting[ask] = asyncio.get_running_loop().create_future()
                self._outbox.send(msg.WantLogs(ask, max(wanted - self.left, LOG_CHUNK)))
                lent = await answer
                self.left += lent
                self._spent = lent == 0
            return self.take(wanted)

    def lent(self, ask: int, lent: int) -> None:
        """The head's answer to ask ``ask``: ``lent`` bytes."""
        self._waiting.pop(ask).set_result(lent)


class _Shard:
    """The shard's referee and what it is playing."""

    def __init__(self, referee: Referee, outbox: _Outbox, log_mb: int | None) -> None:
        self.referee = referee
        self.outbox = outbox
        self.budget = None if log_mb is None else BorrowedLogs(outbox, log_mb)
        self.matches: dict[int, Match] = {}
        self.gates: dict[int, asyncio.Event] = {}
        """Job -> set by the head's ``go``: a gated job's next game may start."""
        self.organiser: Any = None
        self.tasks: set[asyncio.Task[None]] = set()

    def start(self, job: int, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def play(
        self, job: int, config: MatchConfig, games: Sequence[int], folder: Path, gated: bool
    ) -> None:
        go = self.gates[job] = asyncio.Event()

        async def before_game() -> None:
            await go.wait()
            go.clear()

        def on_deal(report: DealReport) -> None:
            self.outbox.send(msg.DealRecorded(job, report))

        def on_game(report: GameReport) -> None:
            self.outbox.send(msg.GameRecorded(job, report))

        try:
            match = Match(
                self.referee,
                config,
                workdir=folder,
                log_budget=self.budget,
                on_deal_recorded=on_deal,
                on_game_recorded=on_game,
                before_game=before_game if gated else None,
            )
            self.matches[job] = match
            await match.run(games)
        except Exception as exc:  # the head raises it where a local match would have
            self.outbox.send(msg.Failed(job, _portable(exc)))
            return
        finally:
            self.matches.pop(job, None)
            self.gates.pop(job, None)
        self.outbox.send(msg.Done(job))

    async def create(self, job: int, request: bytes) -> None:
        try:
            response = await self.organiser.create(pb.CreateMatchRequest.FromString(request))
        except ValueError as exc:
            self.outbox.send(msg.Created(job, None, str(exc)))
            return
        self.outbox.send(msg.Created(job, response.SerializeToString(), ""))

    def status(self, job: int, match_id: str) -> None:
        status = self.organiser.status(match_id)
        self.outbox.send(msg.Status(job, None if status is None else status.SerializeToString()))


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives pickling, else a RuntimeError saying what it was."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


async def _organiser(referee: Referee, settings: Any) -> Any:
    from referee.match_maker import LocalMatchMaker

    advertise = None
    if settings.advertise_host:
        advertise = f"{settings.advertise_host}:{referee.address.rsplit(':', 1)[1]}"
    # The head checks admin tokens; this one never leaves the shard.
    return LocalMatchMaker(
        referee,
        os.urandom(16).hex(),
        settings.records,
        advertise=advertise,
        sandbox=settings.sandbox,
        connect_timeout=settings.connect_timeout,
    )


async def serve(sock: socket.socket) -> None:
    """Take the head's messages on ``sock`` until it says quit or goes away."""
    reader, writer = await asyncio.open_unix_connection(sock=sock)
    outbox = _Outbox(writer)
    init = await read_message(reader)
    if not isinstance(init, msg.Init):
        raise ValueError(f"the head's first message must be Init, not {type(init).__name__}")
    spec, organiser, log_mb, public_names = init
    referee = await start_referee(spec.listen, tls=spec.tls, public_names=public_names)
    shard = _Shard(referee, outbox, log_mb)
    mirror = _Mirror(outbox, referee.feeds)
    referee.listen(mirror)
    if organiser is not None:
        shard.organiser = await _organiser(referee, organiser)
    outbox.send(msg.Ready(referee.address))
    try:
        while True:
            try:
                message = await read_message(reader)
            except asyncio.IncompleteReadError:
                return
            match message:
                case msg.Quit():
                    return
                case msg.Play(job, config, games, folder, gated):
                    shard.start(job, shard.play(job, config, games, folder, gated))
                case msg.Stop(job):
                    if (playing := shard.matches.get(job)) is not None:
                        playing.stop_after_game()
                case msg.Go(job, stop):
                    playing, gate = shard.matches.get(job), shard.gates.get(job)
                    if playing is not None and stop:
                        playing.stop_after_game()
                    if gate is not None:
                        gate.set()
                case msg.Follow(table):
                    mirror.follow(table)
                case msg.Create(job, request):
                    shard.start(job, shard.create(job, request))
                case msg.GetStatus(job, match_id):
                    shard.status(job, match_id)
                case msg.Lent(ask, lent) if shard.budget is not None:
                    shard.budget.lent(ask, lent)
                case _:
                    raise ValueError(f"unknown message from the head: {message!r}")
    finally:
        for task in list(shard.tasks):
            task.cancel()
        await asyncio.gather(*shard.tasks, return_exceptions=True)
        await referee.stop(0)
        writer.close()


def main(argv: list[str]) -> int:
    die_with_parent()  # go when the head goes, whatever killed it: its bots go with us
    sock = socket.socket(fileno=int(argv[0]))
    try:
        asyncio.run(serve(sock))
    except KeyboardInterrupt:
        return 130
    except Exception:
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
