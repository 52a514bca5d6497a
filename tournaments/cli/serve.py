"""``tavolo serve``: run the referee on its own; ``tavolo match``: start matches on it."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import contextlib
import json
import os
import secrets
import signal
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import grpc
import typer

from referee.match_maker import LocalMatchMaker
from referee.sandbox.bwrap import SandboxMode
from referee.sandbox.probe import sandbox_problem
from referee.service.relay import Relay
from referee.service.server import WILDCARD_HOSTS, Referee, start_referee
from referee.shard_front import ShardedMatches
from referee.shard_pool import OrganiserSettings, ShardFailed, ShardPool, ShardSpec
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc
from tournaments.cli.common import (
    check_connect_timeout,
    fail,
    reachable_host,
    read_tls,
    read_token_file,
    referee_channel,
    warn_if_unnamed,
)
from tournaments.cli.grpc_log import grpc_lines_counted
from tournaments.cli.options import (
    CONNECT_HELP,
    DEFAULT_CONNECT_TIMEOUT,
    SANDBOX_HELP,
    RefereeOption,
    RuleOption,
    TlsCaOption,
    TlsCertOption,
    TlsKeyOption,
    WebOption,
    at_least,
)
from tournaments.cli.web_option import open_live_view, start_live_view

if TYPE_CHECKING:
    from tournaments.web.live_view import LiveView

TOKEN_FILE_HELP = (
    "A file holding the admin token (default: the TAVOLO_ADMIN_TOKEN variable, else a new "
    "token is printed). Never on the command line, where any process could read it."
)
SHARDS_HELP = (
    "Referee processes to spread the tables over (default: one per core). With more than "
    "one, this process is the front on --listen and shard k listens on port P+k."
)
CLIENT_TOKEN_HELP = "A file holding the admin token (default: the TAVOLO_ADMIN_TOKEN variable)."


def serve(
    listen: Annotated[
        str, typer.Option(help="Address to serve on, host:port.")
    ] = "127.0.0.1:50051",
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    records: Annotated[Path, typer.Option(help="Folder for the records of matches.")] = Path(
        "records"
    ),
    admin_token_file: Annotated[Path | None, typer.Option(help=TOKEN_FILE_HELP)] = None,
    advertise: Annotated[
        str | None,
        typer.Option(help="host:port remote bots should use (default: this host's name)."),
    ] = None,
    public_names: Annotated[
        bool,
        typer.Option(
            help="Show entry names to spectators (and so to any bot): without it, ListTables "
            "(tavolo watch, the live view) lists each table with its entries left out."
        ),
    ] = False,
    sandbox: Annotated[SandboxMode, typer.Option(help=SANDBOX_HELP)] = SandboxMode.BWRAP,
    connect_timeout: Annotated[
        float, typer.Option(help=CONNECT_HELP + " Default for matches created here.")
    ] = DEFAULT_CONNECT_TIMEOUT,
    web: WebOption = None,
    shards: Annotated[int | None, typer.Option(help=SHARDS_HELP, callback=at_least(1))] = None,
) -> None:
    """Run the referee service until interrupted: bots, spectators, health, reflection.

    Organisers start matches with MatchService (``tavolo match create``); remote entries
    get tickets for their bots. The bots the referee starts connect on a Unix socket of
    their own, so TLS (for remote bots and clients) asks nothing of them.
    """
    tls = read_tls(tls_cert, tls_key)
    warn_if_unnamed(tls, tls_cert, advertise or listen)
    check_connect_timeout(connect_timeout)
    shards = shards or os.cpu_count() or 1
    view = open_live_view(web) if web is not None else None
    given = read_token_file(admin_token_file) or os.environ.get("TAVOLO_ADMIN_TOKEN")
    token = given or secrets.token_urlsafe(18)
    # Bots started from here never see it: each gets a clean environment of its own.
    os.environ.pop("TAVOLO_ADMIN_TOKEN", None)
    with contextlib.suppress(KeyboardInterrupt), grpc_lines_counted(tls is not None):
        asyncio.run(
            _serve(
                listen, tls, token, records, advertise, public_names, given is None, sandbox,
                connect_timeout, view, shards,
            )
        )  # fmt: skip


def _shard_specs(listen: str, shards: int, tls: tuple[bytes, bytes] | None) -> list[ShardSpec]:
    """Shard k (from 1) on --listen's host, port P+k; free ports for port 0."""
    host, _, port = listen.rpartition(":")
    try:
        base = int(port)
    except ValueError:
        fail(f"--listen must be host:port, got {listen!r}")
    if base and base + shards > 65535:
        fail(f"--listen {listen}: {shards} shards need ports {base + 1} to {base + shards}")
    return [ShardSpec(f"{host}:{base + k if base else 0}", tls) for k in range(1, shards + 1)]


async def _serve(
    listen: str,
    tls: tuple[bytes, bytes] | None,
    token: str,
    records: Path,
    advertise: str | None,
    public_names: bool,
    show_token: bool,
    sandbox: SandboxMode,
    connect_timeout: float,
    view: LiveView | None = None,
    shards: int = 1,
) -> None:
    host = listen.rsplit(":", 1)[0]
    matches: ShardedMatches | None = None

    def _died(shard: int, why: str) -> None:
        typer.echo(f"warning: {why}: its matches are lost; starting it again", err=True)
        if matches is not None:
            matches.shard_died(shard, why)

    pool: ShardPool | None = None
    relay: Relay | None = None
    if shards == 1:
        referee = await _listen(listen, tls, public_names, None)
    else:
        specs = _shard_specs(listen, shards, tls)
        relay = Relay(*_relay_credentials(tls, host, advertise))
        referee = await _listen(listen, tls, public_names, relay)
    port = referee.address.rsplit(":", 1)[1]
    if advertise is None:
        advertise = f"{reachable_host(host)}:{port}"
    try:
        if relay is None:
            LocalMatchMaker(referee, token, records, advertise, sandbox, connect_timeout)
        else:
            records.mkdir(mode=0o700, parents=True, exist_ok=True)
            records.chmod(0o700)
    except OSError as exc:
        fail(f"cannot make the records folder {records}: {exc.strerror}")
    if relay is not None:
        settings = OrganiserSettings(
            records, sandbox, connect_timeout, advertise.rsplit(":", 1)[0] if advertise else None
        )
        pool = ShardPool(referee, specs, organiser=settings, on_shard_died=_died)
        matches = ShardedMatches(referee, pool, token)
        relay.route = matches.route
        try:
            await pool.start()
        except ShardFailed as exc:
            await referee.stop(0)
            fail(str(exc))
        referee.matches.attach(matches)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    typer.echo(f"tavolo referee on {host}:{port} ({'TLS' if tls else 'plaintext'})")
    if pool is not None:
        typer.echo(f"{shards} shards, each a referee of its own: {', '.join(pool.addresses)}")
    typer.echo(f"remote bots connect to {advertise}")
    if pool is not None:
        typer.echo("  (or, faster, to the shard that CreateMatch names for their match)")
    if show_token:
        typer.echo(f"admin token: {token}")
    if sandbox is SandboxMode.BWRAP and sandbox_problem() is not None:
        typer.echo(f"warning: built-in bots will run unconfined: {sandbox_problem()}", err=True)
    typer.echo(f"records go to {records}/")
    if view is not None:
        where = "TLS" if tls else "plaintext"
        names = "entry names shown" if public_names else "entry names not public"
        heading = f"tavolo referee on {host}:{port}"
        start_live_view(view, heading, f"{where}, {names}", public_names=public_names)
        view.follow(referee)
    try:
        await stop.wait()
    finally:
        if view is not None:
            await asyncio.to_thread(view.stop, "the referee has stopped")
    typer.echo("stopping: open matches end, their bots are stopped")
    if relay is not None:
        await relay.close()
    if pool is not None:
        await pool.stop()
    await referee.stop(grace=2.0)


async def _listen(
    listen: str, tls: tuple[bytes, bytes] | None, public_names: bool, relay: Relay | None
) -> Referee:
    try:
        return await start_referee(listen, tls=tls, public_names=public_names, relay=relay)
    except (OSError, RuntimeError) as exc:
        fail(f"cannot listen on {listen}: {exc}")


def _relay_credentials(
    tls: tuple[bytes, bytes] | None, host: str, advertise: str | None
) -> tuple[grpc.ChannelCredentials | None, list[tuple[str, str]]]:
    """How the front connects to its shards: as a bot would, trusting the serving
    certificate for the name remote bots are told (with TLS)."""
    if tls is None:
        return None, []
    name = advertise.rsplit(":", 1)[0] if advertise else host
    if name in WILDCARD_HOSTS:
        name = socket.getfqdn()
    return grpc.ssl_channel_credentials(root_certificates=tls[1]), [
        ("grpc.ssl_target_name_override", name)
    ]


match_app = typer.Typer(no_args_is_help=True, help="Start and follow matches on a running referee.")


def _stub(referee: str, tls_ca: Path | None) -> pb_grpc.MatchServiceStub:
    channel = referee_channel(referee, tls_ca)
    return pb_grpc.MatchServiceStub(channel)  # type: ignore[no-untyped-call]


@match_app.command("create")
def create(
    entries: Annotated[
        list[str], typer.Argument(help="One per side: random, heuristic or remote.")
    ],
    seed: Annotated[str, typer.Option(help="Seed text.")],
    referee: RefereeOption = "127.0.0.1:50051",
    token_file: Annotated[Path | None, typer.Option(help=CLIENT_TOKEN_HELP)] = None,
    game: Annotated[str, typer.Option(help="Game preset.")] = "tressette",
    deals: Annotated[int, typer.Option(help="Deals per game; 0 plays to the target.")] = 0,
    sets: Annotated[int, typer.Option(help="Duplicate sets.")] = 1,
    rule: RuleOption = None,
    tls_ca: TlsCaOption = None,
    connect_timeout: Annotated[
        float | None,
        typer.Option(
            help=CONNECT_HELP + " Counted from now: hand the tickets over within it "
            "(default: the referee's, tavolo serve --connect-timeout)."
        ),
    ] = None,
) -> None:
    """Start a match; print its id and the tickets of its remote seats."""
    if connect_timeout is not None:
        check_connect_timeout(connect_timeout)
    request = pb.CreateMatchRequest(
        admin_token=read_token_file(token_file) or os.environ.get("TAVOLO_ADMIN_TOKEN", ""),
        entries=entries,
        game=game,
        rules=rule or [],
        seed=seed,
        deals=max(deals, 0),
        sets=max(sets, 1),
        connect_timeout_ms=round(connect_timeout * 1000) if connect_timeout else 0,
    )
    try:
        response = _stub(referee, tls_ca).CreateMatch(request, timeout=10)
    except grpc.RpcError as exc:
        fail(f"{referee}: {exc.details()}")
    typer.echo(f"match {response.match_id} on {response.referee}")
    for ticket in response.tickets:
        typer.echo(f"  {ticket.label}: TAVOLO_TICKET={ticket.ticket}")


@match_app.command("status")
def status(
    match_id: Annotated[str, typer.Argument(help="The match id create printed.")],
    referee: RefereeOption = "127.0.0.1:50051",
    token_file: Annotated[Path | None, typer.Option(help=CLIENT_TOKEN_HELP)] = None,
    tls_ca: TlsCaOption = None,
) -> None:
    """Print a match's status, the sandbox of each entry, and its result once it is done."""
    request = pb.GetMatchRequest(
        admin_token=read_token_file(token_file) or os.environ.get("TAVOLO_ADMIN_TOKEN", ""),
        match_id=match_id,
    )
    try:
        response = _stub(referee, tls_ca).GetMatch(request, timeout=10)
    except grpc.RpcError as exc:
        fail(f"{referee}: {exc.details()}")
    typer.echo(_status_line(response))
    if response.sandbox_json:
        modes = json.loads(response.sandbox_json)
        typer.echo("sandbox: " + ", ".join(f"{name} {mode}" for name, mode in modes.items()))
    if response.result_json:
        typer.echo(json.dumps(json.loads(response.result_json), indent=2))
    if response.error:
        typer.echo(response.error)


def _status_line(response: pb.GetMatchResponse) -> str:
    """The status as its first line: ``waiting for bots (...)``, ``running``, ``done``
    (with what went wrong in every game, if something did), ``failed``."""
    if response.status == "waiting":
        return "waiting for bots" + (f" ({response.note})" if response.note else "")
    if response.note:
        return f"{response.status}, but {response.note}"
    return response.status
