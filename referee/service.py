"""The gRPC services: the referee's bot streams, spectators, health and reflection.

The servicers are thin: they check tickets and move messages between streams and
tables. No rule is decided here; tables ask the engine.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import contextlib
import gc
import hmac
import inspect
import secrets
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from referee.bot_process import finish_despite_cancel
from referee.engine.rules import PRESETS
from referee.engine.tressette import rules_tables
from referee.match.slots import LinkError, Slot, TicketBook, parse_request
from referee.proto import referee_pb2 as pb
from referee.proto import referee_pb2_grpc as pb_grpc
from referee.protocol import PROTOCOL_VERSION

WILDCARD_HOSTS = ("0.0.0.0", "[::]", "")
"""Listen hosts that mean every interface: no address to connect to."""

MAX_MESSAGE_BYTES = 64 * 1024
"""Largest message a bot may send; a Decision is a few bytes."""
HELLO_TIMEOUT = 10.0
HELLO_LESS_STREAMS = 32
"""Streams of one connection that may wait for their Hello at once; a further one is
refused at once. Streams that said Hello do not count: a relay or a client multiplexing
many bots on one connection is never held back."""
SLOT_CONNECTIONS = 1
"""Connections a slot's own socket holds at once; gRPC core closes any further one."""
SLOT_STREAMS = 2
"""Streams at once on a slot's connection: its stream, and one taking over from it."""
PENDING_STREAMS = 20_000
"""Streams gRPC core may hold before the referee has taken them, past which it starts
refusing new ones at random (its defaults, 1,000 and 3,000, refuse a round of 500 tables
whose 2,000 bots connect at once: grpc.aio takes one new call per turn of the loop)."""


class Turnstile:
    """Lets tables send their requests only as fast as the event loop keeps up.

    A saturated loop runs every ready callback before it looks again at its sockets, so a
    turn lasts as long as the work queued in it. Answers that arrived in time then wait
    past their deadline, and grpc.aio, which takes a new stream only when its one pending
    ``request_call`` completes, seats one stream every two or three turns: 2,000 streams
    need minutes. The turnstile keeps turns short instead. At most ``limit`` requests
    are open at once; while the loop runs late by more than :data:`LAG_LIMIT` the limit
    shrinks, and while it keeps time and tables are waiting it grows, so bots that think
    long (which cost the loop nothing) are never held back.
    """

    TICK = 0.002
    """Seconds between two measures of the loop's lateness, while requests are open."""
    LAG_LIMIT = 0.002
    """How late (seconds) a timer may run before fewer requests are let through."""
    MIN_LIMIT = 16
    """The fewest requests let through at once, however late the loop runs."""

    def __init__(self) -> None:
        self.limit = float(self.MIN_LIMIT * 4)
        self.open = 0
        """Requests let through and not yet over."""
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.lag = 0.0
        """How late the last tick ran, in seconds."""
        self._ticking = False

    async def enter(self) -> None:
        """Wait for the right to send one request; :meth:`leave` once it is over."""
        while self.waiting and self.waiting[0].done():
            self.waiting.popleft()  # cancelled while waiting
        if self.open < self.limit and not self.waiting:
            self.open += 1
        else:
            turn = asyncio.get_running_loop().create_future()
            self.waiting.append(turn)
            try:
                await turn
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled():
                    self.leave()  # let through just as it was cancelled: pass it on
                raise
        self._tick_soon()

    def leave(self) -> None:
        """The request is over (answered, timed out, or its stream gone)."""
        self.open -= 1
        self._admit()

    def _admit(self) -> None:
        while self.waiting and self.open < self.limit:
            turn = self.waiting.popleft()
            if not turn.done():
                self.open += 1
                turn.set_result(None)

    def _tick_soon(self) -> None:
        if not self._ticking:
            self._ticking = True
            loop = asyncio.get_running_loop()
            due = loop.time() + self.TICK
            loop.call_at(due, self._tick, due)

    def _tick(self, due: float) -> None:
        loop = asyncio.get_running_loop()
        self.lag = loop.time() - due
        if self.lag > self.LAG_LIMIT:
            # From what is open, not from the limit: a limit far above it holds nothing.
            self.limit = max(float(self.MIN_LIMIT), min(self.limit, self.open) * 0.9)
        elif self.waiting:
            self.limit += 1
        self._admit()
        self._ticking = False
        if self.open or self.waiting:
            self._tick_soon()


async def read_hello(
    context: grpc.aio.ServicerContext[Any, Any], waiting: Counter[str]
) -> tuple[bytes, pb.Hello]:
    """A Play stream's first message, as sent and parsed; the stream is aborted with the
    reason if it is not a Hello of this protocol version, or if its connection (its peer
    in ``waiting``) already has :data:`HELLO_LESS_STREAMS` streams waiting for theirs."""
    peer = context.peer()
    if waiting[peer] >= HELLO_LESS_STREAMS:
        # Thousands of Hello-less streams on one connection cost the referee hundreds of
        # megabytes and its honest bots their deadlines (issue 26).
        await context.abort(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"too_many_streams: {HELLO_LESS_STREAMS} streams of this connection are "
            "waiting for their Hello already",
        )
    waiting[peer] += 1
    try:
        raw = await asyncio.wait_for(context.read(), HELLO_TIMEOUT)
    except TimeoutError:
        await context.abort(
            grpc.StatusCode.DEADLINE_EXCEEDED, f"no_hello: no Hello within {HELLO_TIMEOUT:g} s"
        )
    finally:
        waiting[peer] -= 1
        if not waiting[peer]:
            del waiting[peer]
    try:
        first = None if raw is grpc.aio.EOF else parse_request(raw)
    except LinkError as exc:
        await context.abort(exc.code, f"{exc.reason}: {exc.message}")
    if first is None or not first.HasField("hello"):
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT, "no_hello: the first message must be a Hello"
        )
    hello = first.hello
    if hello.protocol_version != PROTOCOL_VERSION:
        await context.abort(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"protocol_version: this referee speaks version {PROTOCOL_VERSION}, "
            f"the bot version {hello.protocol_version}",
        )
    return raw, hello


class RefereeServicer(pb_grpc.RefereeServiceServicer):
    """Bot streams: check the Hello and its ticket, then hand the stream to its slot."""

    def __init__(self, book: TicketBook, only: Slot | None = None) -> None:
        self._book = book
        self._only = only
        """The slot whose own socket this serves; None for the TCP listener."""
        self._waiting: Counter[str] = Counter()
        """Streams waiting for their Hello, by connection."""

    async def Play(
        self,
        request_iterator: AsyncIterator[bytes],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        _, hello = await read_hello(context, self._waiting)
        try:
            if hello.key:
                await self._serve_key(hello, context)
                return
            link = self._book.claim(hello.ticket, self._only)
            await link.attach(context, compact=hello.compact_observations)
            await link.serve(context)
        except LinkError as exc:
            await context.abort(exc.code, f"{exc.reason}: {exc.message}")

    async def _serve_key(self, hello: pb.Hello, context: Any) -> None:
        """A stream opened with an entrant key: seated in the entrant's matches in turn."""
        if hello.ticket:
            raise LinkError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "ticket_and_key",
                "a Hello carries a ticket or an entrant key, not both",
            )
        keys = self._book.keys
        if self._only is not None or keys is None:
            raise LinkError(
                grpc.StatusCode.FAILED_PRECONDITION,
                "no_keys",
                "entrant keys work only on the listener of a tournament run; "
                "this stream needs a ticket",
            )
        await keys.serve(hello.key, context, compact=hello.compact_observations)


def _response_bytes(response: pb.PlayResponse | bytes) -> bytes:
    # Requests come encoded already (Slot.send_request); everything else is a message.
    return response if isinstance(response, bytes) else response.SerializeToString()


def _play_handler(
    book: TicketBook, only: Slot | None
) -> grpc.RpcMethodHandler[bytes, pb.PlayResponse | bytes]:
    # Play takes raw bytes, so a malformed message is refused with a reason, not a crash.
    handler: grpc.RpcMethodHandler[bytes, pb.PlayResponse | bytes] = (
        grpc.stream_stream_rpc_method_handler(
            RefereeServicer(book, only).Play, response_serializer=_response_bytes
        )
    )
    return handler


class Relay:
    """Play streams for tickets that another referee holds, passed on to it byte for byte
    (the front of ``tavolo serve --shards``): the bot sees that referee's every message
    and the status it ends the stream with."""

    def __init__(
        self,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self.route: Callable[[str], str | None] = lambda ticket: None
        """host:port of the referee that holds a ticket; None for a ticket none holds."""
        self._credentials = credentials
        self._options = list(options)
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._waiting: Counter[str] = Counter()

    def _channel(self, address: str) -> grpc.aio.Channel:
        channel = self._channels.get(address)
        if channel is None:
            if self._credentials is None:
                channel = grpc.aio.insecure_channel(address, options=self._options)
            else:
                channel = grpc.aio.secure_channel(address, self._credentials, self._options)
            self._channels[address] = channel
        return channel

    async def close(self) -> None:
        """Close the channels to the referees behind."""
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()

    async def Play(
        self, request_iterator: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        raw, hello = await read_hello(context, self._waiting)
        if hello.key:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                "no_keys: entrant keys work only on the listener of a tournament run; "
                "this stream needs a ticket",
            )
        address = self.route(hello.ticket)
        if address is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown_ticket: unknown ticket")
        call: grpc.aio.StreamStreamCall[bytes, bytes] = self._channel(address).stream_stream(
            "/tavolo.v1.RefereeService/Play"
        )()
        upstream = asyncio.ensure_future(self._upstream(raw, context, call))
        try:
            while (message := await call.read()) is not grpc.aio.EOF:
                await context.write(message)
            code, details = await call.code(), await call.details()
        except grpc.aio.AioRpcError as exc:
            code, details = exc.code(), exc.details() or ""
        finally:
            upstream.cancel()
            call.cancel()
        if code is not grpc.StatusCode.OK:
            await context.abort(code, details)

    @staticmethod
    async def _upstream(
        hello: bytes,
        context: grpc.aio.ServicerContext[Any, Any],
        call: grpc.aio.StreamStreamCall[bytes, bytes],
    ) -> None:
        """The bot's messages to the referee behind, its Hello first."""
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            await call.write(hello)
            while (message := await context.read()) is not grpc.aio.EOF:
                await call.write(message)
            await call.done_writing()

    def handler(self) -> grpc.RpcMethodHandler[bytes, bytes]:
        """The Play handler: bytes in, bytes out."""
        handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(
            self.Play
        )
        return handler


async def open_slot_socket(book: TicketBook, link: Slot, path: Path) -> grpc.aio.Server:
    """Serve ``RefereeService`` on the Unix socket ``path`` for ``link``'s ticket alone.

    Each bot process the referee starts gets a socket of its own (bound into its sandbox),
    so a ticket read elsewhere opens nothing on it.
    """
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            # One bot, one connection, one stream (and one more while it reconnects): a bot
            # opening thousands holds no descriptor and no memory of the referee's.
            ("grpc.max_allowed_incoming_connections", SLOT_CONNECTIONS),
            ("grpc.max_concurrent_streams", SLOT_STREAMS),
        ]
    )
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "tavolo.v1.RefereeService", {"Play": _play_handler(book, link)}
            ),
        )
    )
    if server.add_insecure_port(f"unix:{path}") == 0:
        raise OSError(f"cannot listen on unix:{path}")
    try:
        await server.start()
    except BaseException:
        # Cancelled (Ctrl-C) or failed: the caller never gets it, so it is stopped here.
        await finish_despite_cancel(server.stop(0))
        raise
    link.socket = str(path)
    return server


class FeedListener(Protocol):
    """Hears every table's public events in the referee's process, as ``Watch`` sends them
    (the live view). Called on the referee's event loop: it must be quick and not raise.

    A listener with a ``hears_events`` attribute that is False needs only tables opening
    and closing: for it, a head does not ask its shards for every event of every table
    (:mod:`referee.shard_pool`).
    """

    def table(self, feed: TableFeed) -> None:
        """A new table."""

    def event(self, feed: TableFeed, event: pb.Event) -> None:
        """A public event of ``feed``, its ``game`` being the game it belongs to."""

    def closed(self, feed: TableFeed) -> None:
        """The table is over."""


@dataclass
class TableFeed:
    """The public events of one table, for spectators."""

    table_id: str
    match_id: str
    entries: list[str]
    game: int = 0
    history: list[pb.Event] = field(default_factory=list)
    watchers: list[asyncio.Queue[pb.Event | None]] = field(default_factory=list)
    done: bool = False
    listeners: list[FeedListener] = field(default_factory=list)
    follow: Callable[[], Awaitable[None]] | None = None
    """A mirror of a shard's table: fetches its history and its events from then on;
    awaited before a spectator reads the history."""

    def publish(self, event: pb.Event) -> None:
        """Send a public event to every watcher and listener, and keep it for late ones."""
        self.history.append(event)
        for queue in self.watchers:
            queue.put_nowait(event)
        for listener in self.listeners:
            listener.event(self, event)

    def close(self) -> None:
        """The table is over: end every watch."""
        self.done = True
        for queue in self.watchers:
            queue.put_nowait(None)
        for listener in self.listeners:
            listener.closed(self)


SPECTATOR_TOKEN_KEY = "tavolo-spectator-token"
"""The metadata key of a spectator's token (``tavolo watch --token-file``)."""
SPECTATOR_TOKEN_NEEDED = (
    "spectators need the tournament's spectator token while remote entrants play "
    "(tavolo watch --token-file NAME.spectator): a table shows the deals that its duplicate "
    "set's other game plays again (docs/security.md)"
)


GC_YOUNG_THRESHOLD = 10_000
"""Allocations between young garbage collections in a referee process (700 by default)."""


class SpectatorServicer(pb_grpc.SpectatorServiceServicer):
    """Public views of the tables."""

    def __init__(
        self, feeds: dict[str, TableFeed], public_names: bool, token: str | None = None
    ) -> None:
        self._feeds = feeds
        # Anyone may watch, bots included: entry names are shown only when the referee's
        # owner says so, since no bot may learn who it plays.
        self._public_names = public_names
        self._token = token

    async def _refuse_outsiders(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        # Whatever the peer's address: a forwarder on this machine makes anyone loopback.
        if self._token is None:
            return
        given = dict(context.invocation_metadata() or ()).get(SPECTATOR_TOKEN_KEY, "")
        if not isinstance(given, str) or not hmac.compare_digest(given, self._token):
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, SPECTATOR_TOKEN_NEEDED)

    async def Watch(
        self, request: pb.WatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.WatchResponse]:
        await self._refuse_outsiders(context)
        feed = self._feeds.get(request.table_id)
        if feed is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no table {request.table_id!r}")
            return
        if feed.follow is not None:
            await feed.follow()
        queue: asyncio.Queue[pb.Event | None] = asyncio.Queue()
        for event in feed.history:
            queue.put_nowait(event)
        if feed.done:
            queue.put_nowait(None)
        else:
            feed.watchers.append(queue)
        try:
            while (item := await queue.get()) is not None:
                yield pb.WatchResponse(table_id=feed.table_id, event=item)
        finally:
            if queue in feed.watchers:
                feed.watchers.remove(queue)

    async def ListTables(
        self, request: pb.ListTablesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ListTablesResponse:
        await self._refuse_outsiders(context)
        return pb.ListTablesResponse(
            tables=[
                pb.TableInfo(
                    table_id=f.table_id,
                    match_id=f.match_id,
                    game=f.game,
                    entries=f.entries if self._public_names else [],
                )
                for f in self._feeds.values()
                if not f.done
            ]
        )


class MatchMaker(Protocol):
    """What runs the matches organisers create (``referee.organiser.Organiser``)."""

    admin_token: str
    """Every MatchService call must carry it."""

    async def create(self, request: pb.CreateMatchRequest) -> pb.CreateMatchResponse:
        """Start the match asked for; ValueError names what is wrong with the request."""
        ...

    def status(
        self, match_id: str
    ) -> pb.GetMatchResponse | Awaitable[pb.GetMatchResponse | None] | None:
        """Where match ``match_id`` is; None for an id it never made (awaitable, for a
        maker that has to ask the shard that runs the match)."""
        ...


class MatchServicer(pb_grpc.MatchServiceServicer):
    """Organisers' calls, checked and handed to the :class:`MatchMaker` attached, if any."""

    def __init__(self) -> None:
        self.maker: MatchMaker | None = None
        """Matches can be created only when one is attached (``tavolo serve``)."""

    def attach(self, maker: MatchMaker) -> None:
        """Take matches from outside from now on, run by ``maker``."""
        self.maker = maker

    async def _check(self, token: str, context: grpc.aio.ServicerContext[Any, Any]) -> MatchMaker:
        maker = self.maker
        if maker is None:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "no_admin: this referee takes no matches from outside (run tavolo serve)",
            )
        if not secrets.compare_digest(token.encode(), maker.admin_token.encode()):
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "bad_token: wrong admin token")
        return maker

    async def CreateMatch(
        self, request: pb.CreateMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.CreateMatchResponse:
        maker = await self._check(request.admin_token, context)
        try:
            response = await maker.create(request)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"bad_match: {exc}")
        return response

    async def GetMatch(
        self, request: pb.GetMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetMatchResponse:
        maker = await self._check(request.admin_token, context)
        found = maker.status(request.match_id)
        status = await found if inspect.isawaitable(found) else found
        if status is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        return status


@dataclass
class Referee:
    """A running referee server and what it serves."""

    server: grpc.aio.Server
    address: str
    """host:port bots connect to."""
    book: TicketBook
    feeds: dict[str, TableFeed]
    health: health.aio.HealthServicer
    matches: MatchServicer
    public_names: bool = False
    """Spectators may see the entries' names (ListTables, and so the feed's listeners)."""
    listeners: list[FeedListener] = field(default_factory=list)
    turnstile: Turnstile = field(default_factory=Turnstile)
    """What every table passes to send a request (on the referee's loop)."""

    def add_feed(self, feed: TableFeed) -> None:
        """Serve a new table's feed to spectators, and tell the listeners."""
        self.feeds[feed.table_id] = feed
        feed.listeners = list(self.listeners)
        for listener in self.listeners:
            listener.table(feed)

    def listen(self, listener: FeedListener) -> None:
        """Tell ``listener`` of every table started from now on (on the referee's loop)."""
        self.listeners.append(listener)

    async def stop(self, grace: float = 1.0) -> None:
        """Stop serving; open streams get ``grace`` seconds."""
        await self.server.stop(grace)


async def start_referee(
    listen: str = "127.0.0.1:0",
    *,
    tls: tuple[bytes, bytes] | None = None,
    public_names: bool = False,
    spectator_token: str | None = None,
    relay: Relay | None = None,
) -> Referee:
    """Start the services on ``listen`` (port 0 picks a free one), with TLS if given.

    ``public_names`` lets spectators see the entries' names in ListTables;
    ``spectator_token``, if given, is what ListTables and Watch callers must send (metadata
    ``tavolo-spectator-token``), wherever they connect from; ``relay`` serves
    RefereeService.Play by passing every stream on to the referee that holds its ticket.
    """
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
            ("grpc.server.max_pending_requests", PENDING_STREAMS),
            ("grpc.server.max_pending_requests_hard_limit", 2 * PENDING_STREAMS),
        ]
    )
    book = TicketBook()
    feeds: dict[str, TableFeed] = {}
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "tavolo.v1.RefereeService",
                {"Play": _play_handler(book, None) if relay is None else relay.handler()},
            ),
        )
    )
    spectators = SpectatorServicer(feeds, public_names, spectator_token)
    pb_grpc.add_SpectatorServiceServicer_to_server(spectators, server)  # type: ignore[no-untyped-call]
    matches = MatchServicer()
    pb_grpc.add_MatchServiceServicer_to_server(matches, server)  # type: ignore[no-untyped-call]
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    services = (
        pb.DESCRIPTOR.services_by_name["RefereeService"].full_name,
        pb.DESCRIPTOR.services_by_name["SpectatorService"].full_name,
        pb.DESCRIPTOR.services_by_name["MatchService"].full_name,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
    )
    reflection.enable_server_reflection(services, server)
    if tls is None:
        port = server.add_insecure_port(listen)
    else:
        key, cert = tls
        port = server.add_secure_port(listen, grpc.ssl_server_credentials([(key, cert)]))
    if port == 0:
        raise OSError(f"cannot listen on {listen}")
    # The engine's action tables and everything imported so far live as long as the
    # process: freezing them keeps the garbage collector from walking them on every
    # full collection, which otherwise shows as latency spikes mid-match.
    for rules in PRESETS.values():
        rules_tables(rules)
    gc.freeze()
    # A decision allocates about a dozen more tracked objects than it frees: at the default
    # 700 the young collections cost up to a tenth of the referee's CPU per decision
    # (docs/benchmarks.md, "CPU per decision").
    gc.set_threshold(GC_YOUNG_THRESHOLD, 50, 100)
    await server.start()
    for name in services[:3]:
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    host = listen.rsplit(":", 1)[0]
    if host in WILDCARD_HOSTS:
        host = "127.0.0.1"
    return Referee(server, f"{host}:{port}", book, feeds, health_servicer, matches, public_names)
