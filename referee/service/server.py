"""A running referee: its gRPC server and every service on it, started with
:func:`start_referee`."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import gc
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from referee.engine.registry import presets
from referee.match.slots import TicketBook
from referee.service.bot_streams import MAX_MESSAGE_BYTES, play_handler
from referee.service.feeds import FeedListener, TableFeed
from referee.service.matches import MatchServicer
from referee.service.relay import Relay
from referee.service.spectators import SpectatorServicer
from referee.service.turnstile import Turnstile
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc

WILDCARD_HOSTS = ("0.0.0.0", "[::]", "")
"""Listen hosts that mean every interface: no address to connect to."""

PENDING_STREAMS = 20_000
"""Streams gRPC core may hold before the referee has taken them, past which it starts
refusing new ones at random (its defaults, 1,000 and 3,000, refuse a round of 500 tables
whose 2,000 bots connect at once: grpc.aio takes one new call per turn of the loop)."""

GC_YOUNG_THRESHOLD = 10_000
"""Allocations between young garbage collections in a referee process (700 by default)."""


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
                {"Play": play_handler(book, None) if relay is None else relay.handler()},
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
    for rules in presets().values():
        if rules.family.warm_up is not None:
            rules.family.warm_up(rules)
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
