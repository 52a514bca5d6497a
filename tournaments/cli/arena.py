"""``tavolo arena``: a competition that lives for weeks (docs/arena.md)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Annotated, Any

import typer
import uvicorn
from starlette.applications import Starlette

from tournaments.arena.api import ArenaApi
from tournaments.arena.archives import pack
from tournaments.arena.config import ConfigError, load_arena
from tournaments.arena.final import tournament_file
from tournaments.arena.ladder_cluster import MeetingCluster
from tournaments.arena.ladder_play import LadderRunner
from tournaments.arena.remote_bots import RemoteBots
from tournaments.arena.store import ArenaError, ArenaStore, now_utc
from tournaments.arena.worker import SubmissionWorker
from tournaments.cli.common import fail
from tournaments.cli.options import at_least
from tournaments.cluster_task import ClusterError
from tournaments.web.arena_account import SignedIn, account_routes
from tournaments.web.arena_admin import admin_routes
from tournaments.web.arena_pages import page_routes

arena_app = typer.Typer(
    no_args_is_help=True,
    help="A long-lived arena: entrants submit bots, which are built, validated and rated.",
)


class ArenaStartError(RuntimeError):
    """What keeps ``arena serve`` from starting, in one line for the organiser."""


DbOption = Annotated[Path, typer.Option("--db", help="The arena's SQLite database.")]
TOKEN_ENV = "TAVOLO_ARENA_TOKEN"
ArenaOption = Annotated[str, typer.Option(help="The arena's address, e.g. https://arena.example/")]
TokenOption = Annotated[
    str | None, typer.Option(help=f"Your token; better in the environment, {TOKEN_ENV}.")
]
CaOption = Annotated[
    Path | None, typer.Option(help="Trust the arena's certificate from this CA file.")
]


def _store(db: Path) -> ArenaStore:
    if not db.parent.is_dir():
        fail(f"--db: the folder {db.parent} does not exist")
    try:
        return ArenaStore(db)
    except Exception as exc:  # sqlite3.DatabaseError, OSError: one line, not a traceback
        fail(f"--db {db}: cannot open the arena's database: {exc}")


def _site(api: ArenaApi, *, secure: bool, parallel: int) -> Starlette:
    """The API, the public pages and those behind a sign-in, one app; ``secure``: served
    over TLS (the cookies are ``Secure``)."""
    signed_in = SignedIn(api, secure=secure)
    return api.app([
        *page_routes(api),
        *account_routes(api, signed_in),
        *admin_routes(api, signed_in, parallel=parallel),
    ])  # fmt: skip


@arena_app.command()
def admin(db: DbOption) -> None:
    """Make an organiser token, which signs in to the site's admin page, and print it
    once: only its digest is kept."""
    store = _store(db)
    try:
        token = store.sessions.new_organiser_token(now_utc())
    finally:
        store.close()
    typer.echo(f"organiser token {token}")
    typer.echo("Keep it to yourself: sign in with it at /signin to reach /admin.", err=True)


@arena_app.command()
def invite(
    name: Annotated[str, typer.Argument(help="The entrant's name, shown on the ladder.")],
    db: DbOption,
) -> None:
    """Make an entrant and print its token, once: only its digest is kept."""
    store = _store(db)
    try:
        entrant, token = store.invite(name)
    except ArenaError as exc:
        fail(str(exc))
    finally:
        store.close()
    typer.echo(f"entrant {entrant.name}: token {token}")
    typer.echo("Give the token to the entrant alone: the arena cannot show it again.", err=True)


@arena_app.command()
def invitation(
    db: DbOption,
    uses: Annotated[int, typer.Option(help="How many entrants may sign up with it.")] = 1,
) -> None:
    """Make an invitation code for sign-up (with [signup] open = true), printed once."""
    store = _store(db)
    try:
        code = store.new_invitation(uses)
    except ArenaError as exc:
        fail(str(exc))
    finally:
        store.close()
    typer.echo(f"invitation {code} ({uses} sign-up{'s' if uses != 1 else ''})")


@arena_app.command()
def freeze(db: DbOption) -> None:
    """Close submissions for good: the season's final is next (tavolo arena final)."""
    store = _store(db)
    try:
        closed = store.freeze(now_utc())
        when = store.frozen()
    finally:
        store.close()
    typer.echo(f"submissions {'closed' if closed else 'were closed already'} at {when}")


@arena_app.command()
def disable(
    submission: Annotated[int, typer.Argument(help="The submission's number.")],
    db: DbOption,
    reason: Annotated[str, typer.Option(help="Why: its entrant reads it.")] = "",
) -> None:
    """Take a submission off the ladder and the leaderboard."""
    store = _store(db)
    try:
        done = store.disable(submission, reason)
    except ArenaError as exc:
        fail(str(exc))
    finally:
        store.close()
    typer.echo(f"submission {done.id} of {done.entrant}: disabled ({done.reason})")


@arena_app.command()
def final(
    arena_file: Annotated[Path, typer.Argument(help="The arena file (TOML).")],
    db: DbOption,
    games: Annotated[int, typer.Option(help="Games of each match of the final.")],
    out: Annotated[Path, typer.Option(help="A new folder for the final's report.")],
    sprt: Annotated[
        str | None, typer.Option(help="ELO0,ELO1: stop once the GSPRT decides (two finalists).")
    ] = None,
    listen: Annotated[
        str | None,
        typer.Option(
            metavar="HOST:PORT",
            help="Where remote finalists' bots connect (tavolo tournament run --listen).",
        ),
    ] = None,
    tls_cert: Annotated[
        Path | None, typer.Option(help="Serve remote finalists' bots over TLS with this.")
    ] = None,
    tls_key: Annotated[Path | None, typer.Option(help="The certificate's private key.")] = None,
) -> None:
    """Play the season's final between each entrant's chosen (else best rated) submission,
    with the tournament machinery, and write its report. Submissions must be frozen. A
    remote finalist's bot connects to --listen with its submission's key."""
    try:
        config = load_arena(arena_file)
    except ConfigError as exc:
        fail(str(exc))
    store = _store(db)
    try:
        if store.frozen() is None:
            fail("submissions are open: close them first (tavolo arena freeze)")
        try:
            text = tournament_file(store, config, games)
        except ArenaError as exc:
            fail(str(exc))
    finally:
        store.close()
    tournament = db.with_name(db.name + ".final.toml")
    tournament.write_text(text, encoding="utf-8")
    typer.echo(f"the final's tournament file: {tournament}")
    tavolo = str(Path(sys.executable).with_name("tavolo"))
    results = str(db.with_name(db.name + ".final.db"))
    run = [tavolo, "tournament", "run", str(tournament), "--db", results]
    if sprt is not None:
        run += ["--sprt", sprt]
    if listen is not None:
        run += ["--listen", listen]
    if tls_cert is not None:
        run += ["--tls-cert", str(tls_cert)]
    if tls_key is not None:
        run += ["--tls-key", str(tls_key)]
    for argv in (run, [tavolo, "tournament", "report", str(out), "--db", results]):
        done = subprocess.run(argv, check=False)
        if done.returncode != 0:
            raise typer.Exit(done.returncode)


@arena_app.command()
def serve(
    arena_file: Annotated[Path, typer.Argument(help="The arena file (TOML, docs/arena.md).")],
    db: DbOption,
    listen: Annotated[
        str, typer.Option(help="HOST:PORT to serve the site and the API on (port 0: any).")
    ] = "127.0.0.1:8080",
    tls_cert: Annotated[
        Path | None, typer.Option(help="Serve HTTPS with this certificate.")
    ] = None,
    tls_key: Annotated[Path | None, typer.Option(help="The certificate's private key.")] = None,
    parallel: Annotated[
        int,
        typer.Option(
            help="Ladder meetings played at once (each submission in one at a time); "
            "default: the cores, halved.",
            callback=at_least(1),
        ),
    ] = max(1, (os.cpu_count() or 2) // 2),
    referee_listen: Annotated[
        str | None,
        typer.Option(
            metavar="HOST:PORT",
            help="Serve the referee remote bots connect to here (with [remote] allowed in the "
            "arena file), over TLS with --tls-cert and --tls-key.",
        ),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            metavar="tcp://HOST:PORT|local:N",
            help="Play the ladder's meetings on a Dask cluster's workers, as many at once as "
            "they have threads (docs/arena.md): its scheduler's address, or local:N for N "
            "workers on this machine. The workers must see --db's folders at the same paths.",
        ),
    ] = None,
) -> None:
    """Serve the arena: its API, the builds and validations, and the ladder, until
    interrupted; it resumes from --db."""
    try:
        config = load_arena(arena_file)
    except ConfigError as exc:
        fail(str(exc))
    meetings: MeetingCluster | None = None
    if cluster is not None:
        try:
            meetings = MeetingCluster(
                cluster, db.with_name(db.name + ".ladder"),
                on_warning=lambda line: typer.echo(line, err=True),
            )  # fmt: skip
        except ClusterError as exc:
            fail(str(exc))
    if (tls_cert is None) != (tls_key is None):
        fail("--tls-cert and --tls-key come together")
    if config.remote.allowed and referee_listen is None:
        fail(f"{arena_file}: [remote] allowed = true: give --referee-listen HOST:PORT")
    if referee_listen is not None and not config.remote.allowed:
        fail(f"--referee-listen: {arena_file} takes no remote bots ([remote] allowed = true)")
    tls = None
    if referee_listen is not None and tls_cert is not None and tls_key is not None:
        try:
            tls = (tls_key.read_bytes(), tls_cert.read_bytes())
        except OSError as exc:
            fail(f"{exc.filename}: cannot read it: {exc.strerror}")
    host, _, port_text = listen.rpartition(":")
    if not host or not port_text.isdigit():
        fail(f"--listen: expected HOST:PORT, got {listen!r}")
    host = host.strip("[]")
    try:
        sock = socket.create_server(
            (host, int(port_text)), family=socket.AF_INET6 if ":" in host else socket.AF_INET
        )
    except OSError as exc:
        fail(f"--listen {listen}: cannot listen: {exc.strerror}")
    store = _store(db)
    api = ArenaApi(store, config)
    server = uvicorn.Server(
        uvicorn.Config(
            _site(api, secure=tls_cert is not None, parallel=parallel),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            ws="none",
            ssl_certfile=str(tls_cert) if tls_cert else None,
            ssl_keyfile=str(tls_key) if tls_key else None,
            timeout_graceful_shutdown=2,
        )
    )
    scheme = "https" if tls_cert else "http"
    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]

    failure: list[BaseException] = []

    async def main() -> None:
        serving = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started and not serving.done():
            await asyncio.sleep(0.01)
        if not server.started:
            await serving
            return
        remote = None
        if referee_listen is not None:
            try:
                remote = await RemoteBots.start(store, config, referee_listen, tls=tls)
            except (OSError, RuntimeError) as exc:
                failure.append(ArenaStartError(f"--referee-listen {referee_listen}: {exc}"))
                server.should_exit = True
                await serving
                return
            api.remote = remote
        if meetings is not None:
            try:
                await meetings.__aenter__()
            except ClusterError as exc:
                failure.append(exc)
                server.should_exit = True
                await serving
                return
        typer.echo(f"arena {config.name}: {scheme}://{shown}:{bound[1]}/", err=False)
        if remote is not None:
            typer.echo(f"remote bots connect to port {remote.port}", err=False)
        ladder = LadderRunner(store, config, parallel=parallel, cluster=meetings, remote=remote)
        tasks = [
            asyncio.ensure_future(SubmissionWorker(store, config, remote=remote).run()),
            asyncio.ensure_future(ladder.run()),
        ]

        def stopped(task: asyncio.Future[None]) -> None:
            if not task.cancelled() and task.exception() is not None:
                failure.append(task.exception())  # type: ignore[arg-type]
                server.should_exit = True  # a broken arena must not look healthy

        for task in tasks:
            task.add_done_callback(stopped)
        try:
            await serving
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if meetings is not None:
                await meetings.__aexit__(None, None, None)
            if remote is not None:
                await remote.stop()

    try:
        asyncio.run(main())
    finally:
        store.close()
        sock.close()
    if failure:
        why = failure[0]
        # A cluster's failure is one line made for the organiser; anything else is a bug.
        told = isinstance(why, (ClusterError, ArenaStartError))
        fail(f"the arena stopped: {why if told else repr(why)}", 1)


@arena_app.command()
def submit(
    bot: Annotated[
        Path, typer.Argument(help="The bot's folder (bot.toml at its top), or an archive.")
    ],
    arena: ArenaOption,
    token: TokenOption = None,
    tls_ca: CaOption = None,
) -> None:
    """Submit a bot to an arena: its folder is packed as a .tar.gz, or an archive is sent."""
    token = _token(token)
    if bot.is_dir():
        if not (bot / "bot.toml").is_file():
            fail(f"{bot}: no bot.toml at the top of the folder")
        data = pack(bot)
    elif bot.is_file():
        data = bot.read_bytes()
    else:
        fail(f"{bot}: no such folder or file")
    answer = _post(arena, "/api/v1/submissions", data, token, tls_ca)
    typer.echo(
        f"submission {answer['id']}: {answer['state']} ({answer['files']} files, "
        f"digest {answer['digest'][:16]})"
    )


@arena_app.command()
def remote(
    arena: ArenaOption,
    token: TokenOption = None,
    tls_ca: CaOption = None,
) -> None:
    """Make a remote submission: your bot runs on your machine and connects to the arena's
    referee with the key printed here, once (docs/arena.md, "Remote bots")."""
    token = _token(token)
    answer = _post(arena, "/api/v1/remote", b"", token, tls_ca)
    submission = answer["submission"]
    typer.echo(f"submission {submission['id']}: remote; its key is shown this once")
    line = f"TAVOLO_REFEREE={answer['referee']} TAVOLO_KEY={answer['key']}"
    line += f" TAVOLO_STREAMS={answer['streams']}"
    if answer["tls"]:
        line += " TAVOLO_TLS_CA=<the arena's CA file>"
    typer.echo(line)


def _token(given: str | None) -> str:
    token = given or os.environ.get(TOKEN_ENV)
    if not token:
        fail(f"no token: give --token or set {TOKEN_ENV}")
    return token


def _post(arena: str, path: str, data: bytes, token: str, tls_ca: Path | None) -> Any:
    """POST ``data`` to the arena's ``path`` as the entrant of ``token``: the JSON answer;
    a refusal or an unreachable arena ends the command with one line."""
    request = urllib.request.Request(
        arena.rstrip("/") + path,
        data=data,
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/octet-stream"},
    )
    context = None
    if tls_ca is not None:
        try:
            context = ssl.create_default_context(cafile=str(tls_ca))
        except (OSError, ssl.SSLError) as exc:
            fail(f"--tls-ca {tls_ca}: cannot read it: {exc}")
    try:
        with urllib.request.urlopen(request, timeout=120, context=context) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        fail(f"the arena refused it ({exc.code}): {_error_of(exc)}")
    except (urllib.error.URLError, OSError) as exc:
        fail(f"--arena {arena}: cannot reach the arena: {getattr(exc, 'reason', exc)}")


def _error_of(exc: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(exc.read())["error"])
    except (ValueError, KeyError, TypeError):
        return exc.reason if isinstance(exc.reason, str) else str(exc)
