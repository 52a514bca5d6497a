"""Referee shards: child processes, each a referee of its own, run by one head process.

One asyncio loop is one core: a referee alone cannot use the rest of the machine. A
:class:`ShardPool` starts one ``python -m referee.shard_worker`` per :class:`ShardSpec`
and talks to each over a socketpair (the messages of :mod:`referee.shard_messages`). Each
table lives wholly in one shard, with its bots; the head sees every shard's tables in its
own referee's ``feeds``, so its spectators, ``ListTables`` and the live view see one
referee. A mirror carries a table's events only once someone follows it (a spectator's
``Watch``, or a listener of the head that hears events, such as the live view): sending
every event of every table to the head would cost it about as much as the play.

A shard that dies is started again with the same spec. What it was playing is lost:
:class:`ShardLost` to each waiting caller, whose match is replayed (tournaments) or
failed (``tavolo serve``); whatever it had reported stays reported.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import asyncio
import collections
import contextlib
import functools
import itertools
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee import shard_messages as msg
from referee.match.config import MatchConfig
from referee.match.results import DealReport, GameReport
from referee.sandbox.bot_process import LogBudget
from referee.sandbox.bwrap import SandboxMode
from referee.service.feeds import TableFeed, forget_old_feeds
from referee.service.server import Referee
from referee.shard_messages import frame, read_message
from tavolo_bot.proto import referee_pb2 as pb

START_TIMEOUT = 60.0
"""Seconds a new shard has to report its referee listening."""
STOP_TIMEOUT = 10.0
"""Seconds a shard has to finish after ``quit`` before it is killed."""
STDERR_GRACE = 2.0
"""Seconds an ended shard's stderr has to reach its end."""
RESTARTS = 3
"""Tries at starting a lost shard again before leaving it down."""


@dataclass(frozen=True)
class ShardSpec:
    """How one shard's referee listens."""

    listen: str = "127.0.0.1:0"
    tls: tuple[bytes, bytes] | None = None


@dataclass(frozen=True)
class OrganiserSettings:
    """``tavolo serve``'s: each shard runs an :class:`referee.match_maker.LocalMatchMaker`."""

    records: Path
    sandbox: SandboxMode
    connect_timeout: float
    advertise_host: str | None = None
    """The host remote bots are told to use with a shard's port; None: its address."""


class ShardLost(RuntimeError):
    """The shard that played this was lost (it died, or was killed)."""


class ShardFailed(RuntimeError):
    """A shard could not be started: names the shard and why."""


@dataclass
class _Job:
    shard: int
    done: asyncio.Future[Any]
    on_deal: Callable[[DealReport], None] | None = None
    on_game: Callable[[GameReport], None] | None = None
    stopped: Callable[[], bool] | None = None
    gated: bool = False


@dataclass
class _Shard:
    index: int
    spec: ShardSpec
    process: asyncio.subprocess.Process | None = None
    writer: asyncio.StreamWriter | None = None
    address: str = ""
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    tables: set[str] = field(default_factory=set)
    reader_task: asyncio.Task[None] | None = None
    lives: int = 0
    """Times it was started."""
    given_up: bool = False
    """It could not be started again: no more work goes there."""
    stderr: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=20))
    """The last lines the process wrote to stderr."""
    stderr_task: asyncio.Task[None] | None = None


class ShardPool:
    """Shard processes, started together and restarted when one dies."""

    def __init__(
        self,
        head: Referee,
        specs: Sequence[ShardSpec],
        *,
        organiser: OrganiserSettings | None = None,
        log_budget: LogBudget | None = None,
        on_shard_died: Callable[[int, str], None] | None = None,
    ) -> None:
        if not specs:
            raise ValueError("a shard pool needs at least one shard")
        self.head = head
        self.organiser = organiser
        self.log_budget = log_budget
        """What every shard's bots may keep in their logs together; each shard borrows
        from it as its logs grow (None: no cap but each entry's own)."""
        self.on_shard_died = on_shard_died
        self._shards = [_Shard(i, spec) for i, spec in enumerate(specs)]
        self._jobs: dict[int, _Job] = {}
        self._ids = itertools.count(1)
        self._stopping = False
        self._restarts: set[asyncio.Task[None]] = set()
        self._all_down = asyncio.Event()
        self._followed: set[str] = set()
        """Mirrored tables whose events the head asked for."""
        self._histories: dict[str, list[asyncio.Future[None]]] = {}
        """Followed tables whose history is on its way, and who waits for it."""

    @property
    def addresses(self) -> list[str]:
        """Shard i's referee, host:port ("" while it is being restarted)."""
        return [s.address if s.ready.is_set() else "" for s in self._shards]

    def __len__(self) -> int:
        return len(self._shards)

    def alive(self, shard: int) -> bool:
        """Whether shard ``shard`` is serving now."""
        return self._shards[shard].ready.is_set()

    def load(self, shard: int) -> int:
        """Tables open on shard ``shard``, and jobs sent there that have none yet."""
        jobs = sum(1 for j in self._jobs.values() if j.shard == shard)
        return max(jobs, len(self._shards[shard].tables))

    async def start(self) -> None:
        """Start every shard; ShardFailed if one does not come up."""
        try:
            await asyncio.gather(*(self._start(s) for s in self._shards))
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Ask every shard to quit, kill those that do not, and wait for all."""
        self._stopping = True
        for task in self._restarts:
            task.cancel()
        for shard in self._shards:
            if shard.writer is not None and not shard.writer.is_closing():
                shard.writer.write(frame(msg.Quit()))
        for shard in self._shards:
            process = shard.process
            if process is None:
                continue
            try:
                await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
            for reading in (shard.reader_task, shard.stderr_task):
                if reading is not None:
                    await asyncio.gather(reading, return_exceptions=True)

    # -- what the head asks of shards ------------------------------------------------------

    async def play(
        self,
        config: MatchConfig,
        games: Sequence[int],
        *,
        workdir: Path,
        on_deal: Callable[[DealReport], None],
        on_game: Callable[[GameReport], None],
        stopped: Callable[[], bool] | None = None,
        gated: bool = False,
    ) -> None:
        """Play games ``games`` of a match on the least loaded shard, hearing each deal and
        game as it ends; the match's own exception if it fails there, ShardLost if the shard
        dies first. ``stopped()`` true after a game: the shard plays no further one. With
        ``gated``, each game waits for the one before to have been heard (and ``stopped``
        asked), so nothing is played past the game that stopped the match."""
        shard = await self._least_loaded()
        job, future = self._new_job(
            shard, on_deal=on_deal, on_game=on_game, stopped=stopped, gated=gated
        )
        self._send(shard, msg.Play(job, config, tuple(games), workdir, gated))
        await future

    async def create_match(
        self, request: pb.CreateMatchRequest
    ) -> tuple[int, pb.CreateMatchResponse]:
        """Create the match on the least loaded shard's organiser: (shard, its response);
        ValueError naming what is wrong with the request."""
        shard = await self._least_loaded()
        job, future = self._new_job(shard)
        self._send(shard, msg.Create(job, request.SerializeToString()))
        response, error = await future
        if error:
            raise ValueError(error)
        return shard, pb.CreateMatchResponse.FromString(response)

    async def match_status(self, shard: int, match_id: str) -> pb.GetMatchResponse | None:
        """Where match ``match_id`` is on shard ``shard``; None if it never made it."""
        await self._shards[shard].ready.wait()
        job, future = self._new_job(shard)
        self._send(shard, msg.GetStatus(job, match_id))
        data = await future
        return None if data is None else pb.GetMatchResponse.FromString(data)

    def lives(self, shard: int) -> int:
        """Times shard ``shard`` was started: a match made in an earlier life is lost."""
        return self._shards[shard].lives

    # -- inside ----------------------------------------------------------------------------

    async def _least_loaded(self) -> int:
        while True:
            ready = [s.index for s in self._shards if s.ready.is_set()]
            if ready:
                return min(ready, key=lambda i: (self.load(i), i))
            if self._stopping:
                raise ShardLost("the shards are stopping")
            if self._all_down.is_set():
                raise ShardFailed("every shard died and none could be started again")
            waits = [asyncio.ensure_future(s.ready.wait()) for s in self._shards]
            waits.append(asyncio.ensure_future(self._all_down.wait()))
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for wait in waits:
                    wait.cancel()

    def _new_job(self, shard: int, **hooks: Any) -> tuple[int, asyncio.Future[Any]]:
        job = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._jobs[job] = _Job(shard, future, **hooks)
        future.add_done_callback(lambda _: self._jobs.pop(job, None))
        return job, future

    def _send(self, shard: int, message: msg.JobOrder) -> None:
        writer = self._shards[shard].writer
        if writer is None or writer.is_closing():
            job = self._jobs.get(message.job)
            if job is not None and not job.done.done():
                job.done.set_exception(ShardLost(f"shard {shard} is down"))
            return
        writer.write(frame(message))

    async def _start(self, shard: _Shard) -> None:
        """Start ``shard``'s process and wait for its referee to listen."""
        head, child = socket.socketpair()
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "referee.shard_worker",
                str(child.fileno()),
                pass_fds=(child.fileno(),),
                # Ctrl-C is the head's to handle: it stops the shards in order.
                start_new_session=True,
                # Kept, not shown: its last lines say why, should it end.
                stderr=asyncio.subprocess.PIPE,
            )
        finally:
            child.close()
        shard.stderr.clear()
        assert process.stderr is not None
        shard.stderr_task = asyncio.ensure_future(_keep_lines(process.stderr, shard.stderr))
        reader, writer = await asyncio.open_unix_connection(sock=head)
        shard.process, shard.writer = process, writer
        shard.lives += 1
        log_mb = None if self.log_budget is None else self.log_budget.total_mb
        writer.write(frame(msg.Init(shard.spec, self.organiser, log_mb, self.head.public_names)))
        shard.reader_task = asyncio.ensure_future(self._read(shard, reader))
        ready = asyncio.ensure_future(shard.ready.wait())
        await asyncio.wait({ready, shard.reader_task}, timeout=START_TIMEOUT,
                           return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        if not ready.done():
            ready.cancel()
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            code = await process.wait()
            await _heard(shard)
            raise ShardFailed(
                f"shard {shard.index} (listening on {shard.spec.listen}) did not start: "
                f"{_how_it_ended(code)}{_last_words(shard)}"
            )

    async def _read(self, shard: _Shard, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                batch = await read_message(reader)
                assert isinstance(batch, msg.Batch), batch  # a shard sends nothing else
                for message in batch.messages:
                    self._take(shard, message)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            await self._lost(shard)

    def _take(self, shard: _Shard, message: msg.FromShard) -> None:
        feeds = self.head.feeds
        match message:
            case msg.TableEvent(table, event):
                if (feed := feeds.get(table)) is not None:
                    feed.publish(pb.Event.FromString(event))
            case msg.GameOf(table, game):
                if (feed := feeds.get(table)) is not None:
                    feed.game = game
            case msg.TableOpened(table, match_id, entries):
                forget_old_feeds(feeds)
                shard.tables.add(table)
                feed = TableFeed(table, match_id, entries)
                feed.follow = functools.partial(self._follow, shard, table)
                self.head.add_feed(feed)
                if any(getattr(each, "hears_events", True) for each in self.head.listeners):
                    self._ask_history(shard, table)
            case msg.History(table, events):
                if (feed := feeds.get(table)) is not None:
                    for data in events:
                        feed.publish(pb.Event.FromString(data))
                for waiting in self._histories.pop(table, []):
                    if not waiting.done():
                        waiting.set_result(None)
            case msg.TableClosed(table):
                shard.tables.discard(table)
                if (feed := feeds.get(table)) is not None:
                    feed.close()
            case msg.Ready(address):
                shard.address = address
                shard.ready.set()
            case msg.WantLogs(ask, wanted):
                lent = 0 if self.log_budget is None else self.log_budget.take(wanted)
                if shard.writer is not None and not shard.writer.is_closing():
                    shard.writer.write(frame(msg.Lent(ask, lent)))
            case _:
                self._answer(message)

    def _ask_history(self, shard: _Shard, table: str) -> asyncio.Future[None]:
        """Follow ``table`` from now on (once): its history comes first, then its events."""
        waiting: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if table in self._followed:
            if table in self._histories:
                self._histories[table].append(waiting)
            else:
                waiting.set_result(None)
            return waiting
        self._followed.add(table)
        self._histories[table] = [waiting]
        if shard.writer is None or shard.writer.is_closing():
            self._histories.pop(table)
            waiting.set_result(None)  # the shard is gone: nothing more to show
        else:
            shard.writer.write(frame(msg.Follow(table)))
        return waiting

    async def _follow(self, shard: _Shard, table: str) -> None:
        """A spectator wants ``table``: wait until its history is here."""
        await self._ask_history(shard, table)

    def _answer(self, message: msg.JobReport) -> None:
        job = self._jobs.get(message.job)
        if job is None or job.done.done():
            return
        try:
            self._answer_job(job, message)
        except Exception as exc:
            # The head's own failure (storing the result, say) ends the job, not the shard.
            job.done.set_exception(exc)
            self._send(job.shard, msg.Stop(message.job))

    def _answer_job(self, job: _Job, message: msg.JobReport) -> None:
        match message:
            case msg.DealRecorded(_, report) if job.on_deal is not None:
                job.on_deal(report)
            case msg.GameRecorded(number, report) if job.on_game is not None:
                job.on_game(report)
                stop = job.stopped is not None and job.stopped()
                if job.gated:
                    self._send(job.shard, msg.Go(number, stop))
                elif stop:
                    self._send(job.shard, msg.Stop(number))
            case msg.Done():
                job.done.set_result(None)
            case msg.Failed(_, error):
                job.done.set_exception(error)
            case msg.Created(_, response, error):
                job.done.set_result((response, error))
            case msg.Status(_, response):
                job.done.set_result(response)

    async def _lost(self, shard: _Shard) -> None:
        """The shard's socket closed: say so to everyone waiting on it, then restart it."""
        shard.ready.clear()
        if shard.writer is not None:
            shard.writer.close()
        code = None if shard.process is None else await _reap(shard.process)
        await _heard(shard)
        # Killed, it said nothing about why; exited on its own, its last line says it.
        said = _last_words(shard) if code is not None and code > 0 else ""
        why = f"shard {shard.index} {_how_it_ended(code)}{said}"
        for table in list(shard.tables):
            if (feed := self.head.feeds.get(table)) is not None and not feed.done:
                feed.close()
            for waiting in self._histories.pop(table, []):
                if not waiting.done():
                    waiting.set_result(None)
        shard.tables.clear()
        for job in [j for j in self._jobs.values() if j.shard == shard.index]:
            if not job.done.done():
                job.done.set_exception(ShardLost(why))
        if self._stopping:
            return
        if self.on_shard_died is not None:
            self.on_shard_died(shard.index, why)
        task = asyncio.ensure_future(self._restart(shard))
        self._restarts.add(task)
        task.add_done_callback(self._restarts.discard)

    async def _restart(self, shard: _Shard) -> None:
        for attempt in range(1, RESTARTS + 1):
            try:
                await self._start(shard)
                return
            except ShardFailed as exc:
                if self.on_shard_died is not None:
                    self.on_shard_died(shard.index, f"{exc} (restart {attempt} of {RESTARTS})")
            await asyncio.sleep(attempt)
        shard.given_up = True
        if all(s.given_up for s in self._shards):
            self._all_down.set()


async def _keep_lines(stream: asyncio.StreamReader, lines: collections.deque[str]) -> None:
    """Keep the last lines of ``stream`` until it ends."""
    async for line in stream:
        lines.append(line.decode(errors="replace").rstrip())


async def _heard(shard: _Shard) -> None:
    """Wait (briefly) for the rest of an ended shard's stderr."""
    if shard.stderr_task is not None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(shard.stderr_task), STDERR_GRACE)


def _last_words(shard: _Shard) -> str:
    """The last line the shard wrote to stderr, to say why it ended ("" if none)."""
    said = [line for line in shard.stderr if line.strip()]
    return f"; its stderr ends: {said[-1][:300]}" if said else ""


async def _reap(process: asyncio.subprocess.Process) -> int:
    """Its exit code, killing it if it lingers after closing its socket."""
    try:
        return await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        return await process.wait()


def _how_it_ended(code: int | None) -> str:
    if code is None:
        return "is gone"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"
