"""``tavolo tournament run|table|show``: tournaments from a TOML file, resumable in SQLite."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import get_console
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

from referee.engine.deals import seed_commitment
from referee.records import RecordError, verify_lines
from referee.sandbox.bot_process import LogBudget
from referee.sandbox.bwrap import SandboxError
from referee.service.server import WILDCARD_HOSTS, Referee
from tournaments.cli.common import (
    Fault,
    Interrupted,
    always_faulted_line,
    book_to_check,
    check_connect_timeout,
    fail,
    main_fault,
    reachable_host,
    read_tls,
    run_interruptible,
    warn_if_unnamed,
)
from tournaments.cli.grpc_log import grpc_lines_counted
from tournaments.cli.options import (
    AdvertiseOption,
    ClusterOption,
    ConcurrencyOption,
    DbOption,
    ListenOption,
    PublicNamesOption,
    QuietOption,
    ShardsOption,
    TlsCertOption,
    TlsKeyOption,
    WebOption,
    WideOption,
    at_least,
)
from tournaments.cli.web_option import open_live_view, start_live_view
from tournaments.cluster_task import ClusterError
from tournaments.config import ConfigError, RatingSettings, TournamentConfig, load_config
from tournaments.ratings import RatingsError
from tournaments.record_export import export_records
from tournaments.results import always_faulted, forfeit_side, tallies
from tournaments.runner import (
    DEFAULT_LOGS_MB,
    RunSettings,
    RunState,
    RunSummary,
    SilentListener,
    TournamentRun,
    confinements,
    issue_keys,
    keys_file,
    logs_folder,
    note_confinements,
    open_logs,
    open_store,
    remote_names,
    settle_seed,
    spectator_file,
    total_games,
    tournament_warnings,
)
from tournaments.sprt import SprtState, parse_bounds
from tournaments.standings import (
    Standings,
    StoredFacts,
    TableFormat,
    crosstable,
    render,
    stored_facts,
    stored_standings,
    think_by_match,
)
from tournaments.storage import GameRow, StorageError, Store

if TYPE_CHECKING:
    from tournaments.cluster import ClusterTables
    from tournaments.web.live_view import LiveView

tournament_app = typer.Typer(
    no_args_is_help=True,
    help="Tournaments: run one from a TOML file, then print its table or crosstable.",
)


def default_db(file: Path) -> Path:
    """Where a tournament file's results go by default: beside it, as NAME.db."""
    return file.with_suffix(".db")


@tournament_app.command("run")
def run(
    file: Annotated[Path, typer.Argument(help="The tournament file (TOML).")],
    db: Annotated[
        Path | None, typer.Option(help="SQLite database for the results (default: FILE.db).")
    ] = None,
    concurrency: ConcurrencyOption = None,
    shards: ShardsOption = None,
    sprt: Annotated[
        str | None,
        typer.Option(
            help="ELO0,ELO1: stop as soon as the GSPRT (alpha = beta = 0.05) decides; "
            "two entries only."
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option(help="Use a database of another tournament: it is moved aside.")
    ] = False,
    listen: ListenOption = "127.0.0.1:0",
    advertise: AdvertiseOption = None,
    workdir: Annotated[
        Path | None,
        typer.Option(
            help="Keep the bots' folders and logs here (default: NAME.logs beside NAME.db)."
        ),
    ] = None,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    logs_mb: Annotated[
        int,
        typer.Option(
            help="What the bots' logs in that folder may take together, earlier runs' included; "
            "beyond it each log is cut with a line saying so.",
            callback=at_least(1),
        ),
    ] = DEFAULT_LOGS_MB,
    connect_timeout: Annotated[
        float | None,
        typer.Option(
            help="Seconds each bot has to connect when its match starts (default: "
            "connect_timeout in the file's match table, else 20). A remote bot's window opens "
            "when its match does."
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(help="No progress bar and no line per game; faulted games are still shown."),
    ] = False,
    wide: WideOption = False,
    tickets: Annotated[
        bool,
        typer.Option(
            help="Also print each remote seat's ticket for each match (entrant keys need none)."
        ),
    ] = False,
    web: WebOption = None,
    public_names: PublicNamesOption = False,
    cluster: ClusterOption = None,
) -> None:
    """Run (or resume) a tournament and print its table.

    Each finished deal and game is stored as it ends; running the same command again
    after an interruption plays only what is missing.
    """
    config = _load(file)
    if connect_timeout is not None:
        check_connect_timeout(connect_timeout)
        limits = dataclasses.replace(config.limits, connect_timeout=connect_timeout)
        config = dataclasses.replace(config, limits=limits)
    bounds = _sprt_bounds(sprt, config, file)
    try:
        modes = confinements(config)
    except SandboxError as exc:
        fail(str(exc))
    place = _Placement(concurrency, shards, cluster, listen, advertise, tls_cert, tls_key, workdir)
    tables = _cluster_tables(place, config, modes, logs_mb)
    path = db or default_db(file)
    # Bound before the database is touched: a busy port changes nothing.
    view = None if web is None else open_live_view(web, db=path, total_games=total_games(config))
    if view is not None and not view.on_loopback and remote_names(config):
        _warn_of_a_public_page(str(web))
    try:
        store = open_store(path, config, force=force)
    except StorageError as exc:
        fail(str(exc))
    with store:
        try:
            config, made = settle_seed(store, config)
            note_confinements(store, modes)
            if bounds is not None:
                # The report shows the test's state; its bounds are not in the tournament file.
                store.set_fact("sprt", list(bounds))
        except StorageError as exc:
            fail(str(exc))
        if store.moved_aside is not None:
            typer.echo(f"the other tournament's database was moved to {store.moved_aside}")
        if made is not None:
            typer.echo(
                f"seed: {file} names none, so the run made one and keeps it in {path}; "
                f"its commitment, to publish now: {seed_commitment(made)}"
            )
        for line in tournament_warnings(config, modes):
            typer.echo(f"warning: {line}", err=True)
        already = store.game_count()
        logs = workdir or logs_folder(path)
        try:
            budget = open_logs(logs, logs_mb)
        except OSError as exc:
            fail(f"cannot keep the bots' logs in {logs}: {exc.strerror}")
        if budget.left == 0:
            typer.echo(
                f"warning: the bots' logs in {logs} take their --logs-mb ({logs_mb} MB) already: "
                "new logs are cut (fault lines still quote each bot's stderr)",
                err=True,
            )
        live = _LiveStandings(config, store, quiet, view=view, tickets=tickets)
        runner = _set_up_run(
            config, store, live, place, tables, log_budget=budget, sprt_bounds=bounds,
            public_names=public_names,
        )  # fmt: skip
        if view is not None:
            subtitle = f"{config.rules.game}, {config.format.value}, {len(config.entries)} entries"
            start_live_view(view, config.name, subtitle, public_names=public_names)
        with grpc_lines_counted(runner.settings.tls is not None):
            summary = _play(runner, live, path, listen, view, tables)
        if already:
            typer.echo(f"resumed: {already} games were already stored")
        typer.echo(
            f"{summary.games_played} games played now, {store.game_count()} of "
            f"{summary.games_total} stored in {path}"
        )
        cut = "; some were cut at --logs-mb" if budget.left == 0 else ""
        typer.echo(f"bot logs: {logs}{cut}")
        if summary.sprt is not None and bounds is not None:
            typer.echo(sprt_sentence(summary.sprt, bounds))
        if made is not None and store.game_count() == summary.games_total:
            # Only once every game is played: the seed tells every deal.
            typer.echo(f"seed: {made} (check: tavolo seed check {made} {seed_commitment(made)})")
        typer.echo("")
        facts = _facts(store)
        typer.echo(render(_standings(store, facts), TableFormat.PLAIN, wide=wide))
        _fail_if_always_faulted(store, facts)


def _fail_if_always_faulted(store: Store, facts: StoredFacts) -> None:
    """Exit 1, a line for each, if an entry faulted in every game it played."""
    failing = always_faulted(store.games(), facts.seats)
    if not failing:
        return
    wanted = {(match_id, number): name for name, (_, match_id, number) in failing.items()}
    last: dict[str, Fault | None] = {}
    for match_id, number, text in store.records():
        name = wanted.get((match_id, number))
        if name is not None:
            last[name] = main_fault(text.splitlines())
    for name, (played, _, _) in failing.items():
        typer.echo(f"error: {always_faulted_line(name, played, last.get(name))}", err=True)
    raise typer.Exit(1)


def _sprt_bounds(
    sprt: str | None, config: TournamentConfig, file: Path
) -> tuple[float, float] | None:
    """``--sprt ELO0,ELO1`` read and checked, or None without it."""
    if sprt is None:
        return None
    try:
        bounds = parse_bounds(sprt)
    except ValueError as exc:
        fail(str(exc))
    if len(config.entries) != 2:
        fail(f"--sprt compares two entries; {file} has {len(config.entries)}")
    return bounds


def sprt_sentence(state: SprtState, bounds: tuple[float, float]) -> str:
    """The SPRT's verdict as a sentence, e.g. ``SPRT (elo0 0, elo1 10): LLR 2.946 crossed
    the upper bound 2.944: H1 accepted``."""
    head = f"SPRT (elo0 {bounds[0]:g}, elo1 {bounds[1]:g}): LLR {state.llr:.3f}"
    if state.decision == "H1":
        return f"{head} crossed the upper bound {state.upper:.3f}: H1 accepted"
    if state.decision == "H0":
        return f"{head} crossed the lower bound {state.lower:.3f}: H0 accepted"
    return (
        f"{head} is between the bounds {state.lower:.3f} and {state.upper:.3f}: "
        "undecided, more games are needed"
    )


def _play(
    runner: TournamentRun,
    live: _LiveStandings,
    path: Path,
    listen: str,
    view: LiveView | None = None,
    tables: ClusterTables | None = None,
) -> RunSummary:
    """Run the tournament under its progress bar, on ``tables`` if given; every failure is
    one line. The live view, if any, is stopped when the run ends, however it ends."""
    ended = "the run stopped on an error"
    try:
        with live.bar:
            summary = run_interruptible(_run_on(tables, runner))
        ended = "the run has ended"
        return summary
    except (Interrupted, KeyboardInterrupt):
        ended = "the run was interrupted"
        # Interrupted: the bots were stopped and reaped; KeyboardInterrupt: Ctrl-C came
        # before the referee started, with nothing to stop.
        fail(
            f"interrupted: every finished deal and game is in {path}; "
            "run the same command to resume",
            130,
        )
    except (StorageError, ClusterError) as exc:
        fail(str(exc))
    except (OSError, RuntimeError) as exc:
        fail(f"cannot run the referee on {listen}: {exc}")
    finally:
        if view is not None:
            view.stop(ended)


CLUSTER_CONCURRENCY = 1024
"""Matches at once on a cluster unless told otherwise: every match of a round, in practice."""


@dataclasses.dataclass(frozen=True)
class _Placement:
    """The options of ``run`` and ``rerun`` that say where matches are played and how
    remote bots reach the referee; a clean exit if it is given both shards and a cluster."""

    concurrency: int | None
    shards: int | None
    cluster: str | None
    listen: str
    advertise: str | None
    tls_cert: Path | None
    tls_key: Path | None
    workdir: Path | None

    def __post_init__(self) -> None:
        if self.cluster is not None and self.shards is not None:
            fail("--shards and --cluster: the cluster's workers play the matches; choose one")


def _cluster_tables(
    place: _Placement, config: TournamentConfig, modes: dict[str, str], logs_mb: int
) -> ClusterTables | None:
    """``--cluster`` read, None without it (Dask is loaded only when a run enters it)."""
    if place.cluster is None:
        return None
    from tournaments.cluster import ClusterTables

    try:
        return ClusterTables(place.cluster, config, modes, logs_mb=logs_mb, on_warning=_warn)
    except ClusterError as exc:
        fail(str(exc))


def _set_up_run(
    config: TournamentConfig,
    store: Store,
    live: _LiveStandings,
    place: _Placement,
    tables: ClusterTables | None,
    *,
    log_budget: LogBudget | None = None,
    sprt_bounds: tuple[float, float] | None = None,
    public_names: bool = False,
    replay: frozenset[tuple[int, int]] | None = None,
) -> TournamentRun:
    """The run that ``run`` and ``rerun`` play, ``live`` hearing it; TLS read, and ``live``
    told what remote bots need."""
    concurrency = place.concurrency
    if tables is not None and concurrency is None and config.concurrency is None:
        # Matches at once cost the head nothing: the workers' threads bound the sets at once.
        concurrency = CLUSTER_CONCURRENCY
    settings = RunSettings(
        concurrency=concurrency,
        shards=1 if tables is not None else place.shards or os.cpu_count() or 1,
        listen=place.listen,
        tls=_remote(live, place),
        public_names=public_names,
        workdir=place.workdir,
        sprt_bounds=sprt_bounds,
        replay=replay,
    )
    try:
        return TournamentRun(
            config, store, settings, listener=live, tables=tables, log_budget=log_budget
        )
    except ValueError as exc:
        fail(str(exc))


def _warn(line: str) -> None:
    typer.echo(f"warning: {line}", err=True)


async def _run_on(tables: ClusterTables | None, runner: TournamentRun) -> RunSummary:
    """``runner.run()``, inside ``tables`` (connected, its workers checked) if given."""
    if tables is None:
        return await runner.run()
    async with tables:
        return await runner.run()


def _warn_of_a_public_page(web: str) -> None:
    """The tables of a round deal the same cards: a page that remote entrants can reach shows
    them deals before they play them (the referee serves them no spectator stream)."""
    typer.echo(
        f"warning: --web {web}: whoever reaches the page sees every table card by card, "
        "and the tables of a round deal the same cards: a remote entrant who reads it sees "
        "deals before it plays them (keep the page on loopback while remote entrants play)",
        err=True,
    )


class _LiveStandings(SilentListener):
    """What a run shows as it goes: the progress bar, with the leaders' scores and the
    SPRT's LLR; faulted games, remote entrants' keys and tickets, lost tables; and the
    referee to the live view, if any."""

    over_tls = False
    """The referee serves remote bots TLS: the keys line says so."""
    advertise: str | None = None
    """``--advertise``: the address remote bots are told, instead of the listener's."""
    listen = "127.0.0.1:0"
    """``--listen``, as given."""

    def __init__(
        self,
        config: TournamentConfig,
        store: Store,
        quiet: bool,
        console: Console | None = None,
        *,
        view: LiveView | None = None,
        tickets: bool = False,
    ) -> None:
        self.config = config
        self.store = store
        self.view = view
        self.tickets = tickets
        """``--tickets``: each remote seat's ticket is printed."""
        terminal = (console or get_console()).is_terminal
        self.every_game = not quiet and not terminal
        """A line per finished game, as fastchess prints them, where no bar can be drawn."""
        self.bar = Progress(
            # Any width: the name and the standings are cut; the count and the ETA never.
            _CutColumn("description", style="bold", max_width=24),
            BarColumn(bar_width=20),
            MofNCompleteColumn(table_column=Column(no_wrap=True)),
            TextColumn("games, ETA", table_column=Column(no_wrap=True)),
            TimeRemainingColumn(table_column=Column(no_wrap=True)),
            _CutColumn("standing"),
            console=console,
            disable=quiet or not terminal,
        )
        self.task = self.bar.add_task(config.name, total=total_games(config), standing="")
        self.names = [e.name for e in config.entries]
        self.seats = [config.rules.seats_of(s) for s in range(config.rules.sides)]
        self.shown = _Shown()

    def referee(self, referee: Referee) -> None:
        """The live view follows the referee's tables."""
        if self.view is not None:
            self.view.follow(referee)

    def progress(self, state: RunState) -> None:
        """Redraw for ``state``; the standings at most twice a second (they read every game)."""
        shown = self.shown
        now = time.monotonic()
        due = now - shown.at >= 0.5 or state.games_done == state.games_total
        if state.games_done != shown.games and due:
            lower = self.config.rules.lower_wins
            counted = tallies(self.names, self.store.games(), self.seats, lower_wins=lower)
            leaders = sorted(counted.values(), key=lambda t: -t.score_percent)[:4]
            shown.games, shown.at = state.games_done, now
            shown.standing = "  ".join(
                f"{t.name} {t.score_percent:.0f}%" for t in leaders if t.pair_games
            )
        standing = shown.standing
        if state.sprt is not None:
            llr = state.sprt
            standing += f"  LLR {llr.llr:.2f} (H0 at {llr.lower:.2f}, H1 at {llr.upper:.2f})"
        self.bar.update(
            self.task, total=state.games_total, completed=state.games_done, standing=standing
        )

    def game(self, game: GameRow, lines: Sequence[str]) -> None:
        """A game was stored: its line when every game gets one, or when it faulted."""
        fault = main_fault(lines)
        if self.every_game or fault is not None:
            self.say(game_line(game, fault))

    def _told(self, address: str) -> str:
        """The address remote bots are told: ``--advertise``, else the listener's, with
        this host's name for a wildcard listen host (the referee reports loopback then)."""
        if self.advertise:
            return self.advertise
        host = self.listen.rpartition(":")[0]
        if host in WILDCARD_HOSTS:
            return f"{reachable_host(host)}:{address.rpartition(':')[2]}"
        return address

    def ticket(self, label: str, ticket: str, address: str) -> None:
        """With ``--tickets``, say where a remote seat connects, and with what ticket."""
        if not self.tickets:
            return
        address = self._told(address)
        self.say(f"remote seat {label}: connect to {address} with ticket {ticket}")

    def keys(self, made: dict[str, str], address: str) -> None:
        """Print the entrant keys made now, once, and where remote bots connect."""
        address = self._told(address)
        for name, key in sorted(made.items()):
            self.say(f"entrant key of {name}: {key}")
        path = keys_file(self.store.path)
        kept = "written to" if made else "made on the first run, kept in"
        tls = " over TLS (give them TAVOLO_TLS_CA)" if self.over_tls else ""
        self.say(
            f"entrant keys {kept} {path}; remote bots connect to {address}{tls} with TAVOLO_KEY"
        )
        watch = spectator_file(self.store.path)
        self.say(f"spectators: tavolo watch --referee {address} --token-file {watch}")

    def warning(self, line: str) -> None:
        _warn(line)

    def notice(self, line: str) -> None:
        self.say(line)

    def say(self, line: str) -> None:
        """Print a line above the progress display."""
        # One line whatever the width: a key cut in two cannot be copied.
        self.bar.console.print(line, soft_wrap=True, markup=False, highlight=False)


class _CutColumn(ProgressColumn):
    """A text of the task (its description, or a field) cut to the width left, never wrapped."""

    def __init__(self, field: str, style: str = "", max_width: int | None = None) -> None:
        self.field = field
        self.style = style
        # Wrappable, so the table shrinks it first; the Text itself never wraps.
        super().__init__(table_column=Column(no_wrap=False, max_width=max_width))

    def render(self, task: Task) -> Text:
        text = task.description if self.field == "description" else task.fields[self.field]
        return Text(str(text), style=self.style, no_wrap=True, overflow="ellipsis")


def game_line(game: GameRow, fault: Fault | None) -> str:
    """One finished game on one line: match, game, sides, result, termination, the fault.

    e.g. ``match 3 game 2: a vs b: 0-1, points 4-11, crash: the bot process ended (entry
    'a', seat 1, game 2, deal 1): exit status 1; log ...; stderr ends: ValueError: ...``
    """
    sides = " vs ".join(game.sides)
    if len(game.sides) == 2:
        result = {None: "1/2-1/2", 0: "1-0", 1: "0-1"}[game.winner]
    else:
        result = "draw" if game.winner is None else f"{game.sides[game.winner]} won"
    points = "-".join(str(t) for t in game.totals)
    line = f"match {game.match_id} game {game.number}: {sides}: {result}, points {points}, "
    line += game.termination
    if fault is None:
        return line
    if fault.forfeit and fault.kind == game.termination:
        return f"{line}: {fault.line().partition(': ')[2]}"
    return f"{line}; fault: {fault.line()}"


@tournament_app.command("verify")
def verify(
    db: DbOption,
    book: Annotated[
        Path | None,
        typer.Option(help="The deal book of [game] book: check every game's hands against it."),
    ] = None,
) -> None:
    """Replay every stored game's record through the engine, as `tavolo verify` does a file."""
    given = book_to_check(book)
    with _open(db) as store:
        count = 0
        books: set[str] = set()
        for match_id, number, text in store.records():
            try:
                done = verify_lines(
                    text.splitlines(), f"{db} match {match_id} game {number}", book=given
                )
            except RecordError as exc:
                fail(str(exc), 1)
            books.update(done.books)
            count += 1
        typer.echo(f"{db}: ok, {count} game records verify")
        for digest in sorted(books):
            checked = "hands checked" if given else "hands not checked: give --book FILE"
            typer.echo(f"  dealt from the book with SHA-256 {digest}: {checked}")


@tournament_app.command("export")
def export(
    db: DbOption,
    folder: Annotated[Path, typer.Argument(help="A new or empty folder for the files.")],
) -> None:
    """Write every finished game's record, one file a match, to publish with the seed.

    Each ``match-N.jsonl`` holds the match's games in order and verifies with ``tavolo
    verify``; ``index.json`` lists the matches, their seeds and each game's result.
    """
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        fail(f"{folder} is not an empty folder: export writes into a new or empty one")
    with _open(db) as store:
        try:
            done = export_records(store, folder, database=db.name)
        except OSError as exc:
            fail(f"cannot write to {folder}: {exc.strerror}", 1)
    typer.echo(f"{folder}: {done.records} game records in {len(done.files)} files, and index.json")


@tournament_app.command("keys")
def keys(
    db: DbOption,
    revoke: Annotated[
        list[str] | None,
        typer.Option(help="Revoke this entrant's key: it opens no stream from now on."),
    ] = None,
    reissue: Annotated[
        list[str] | None,
        typer.Option(help="Give this entrant a new key (printed once); the old one is revoked."),
    ] = None,
) -> None:
    """The remote entrants' keys: which are valid, where the file is; revoke or reissue.

    Works while the tournament runs: a revoked key is refused at its next connection and
    its streams are seated at no further table; a reissued key works at once.
    """
    with _open(db) as store:
        known = store.entrant_keys()
        for name in [*(revoke or []), *(reissue or [])]:
            if name not in known:
                have = ", ".join(sorted(known)) or "none"
                fail(f"--revoke/--reissue: entrant {name!r} has no key (keys: {have})")
        try:
            for name in revoke or []:
                if store.revoke_entrant_key(name):
                    typer.echo(f"revoked the key of {name}")
                else:
                    typer.echo(f"the key of {name} was revoked already")
            made = issue_keys(store, list(reissue or []), again=True)
        except StorageError as exc:
            fail(str(exc))
        for name, key in sorted(made.items()):
            typer.echo(f"entrant key of {name}: {key}")
        if not known:
            typer.echo(f"{db}: no entrant keys (the tournament has no remote entry, or never ran)")
            return
        for name, revoked in sorted(store.entrant_keys().items()):
            typer.echo(f"{name}: {'revoked' if revoked else 'valid'}")
        typer.echo(f"keys file: {keys_file(db)} (the keys themselves are only there)")


@dataclasses.dataclass
class _Shown:
    """The live standings last drawn."""

    games: int = -1
    at: float = 0.0
    standing: str = ""


@tournament_app.command("table")
def table(
    db: DbOption,
    format: Annotated[TableFormat, typer.Option("--format", help="Output format.")] = (
        TableFormat.PLAIN
    ),
    anchor: Annotated[
        str | None, typer.Option(help="Hold this entry at the anchor Elo (default: the file's).")
    ] = None,
    bootstrap: Annotated[
        int | None,
        typer.Option(help="Bootstrap resamples (default: the file's, 1000).", callback=at_least(0)),
    ] = None,
    wide: WideOption = False,
    think_times: Annotated[
        bool,
        typer.Option(
            help="Show think times. Without them two runs of the same tournament (on one "
            "referee, on shards or on a cluster) print the same table, byte for byte."
        ),
    ] = True,
) -> None:
    """The standings: Elo with 95% intervals, LOS, results, points, faults, think times."""
    with _open(db) as store:
        facts = _facts(store)
        settings = facts.ratings
        if anchor is not None:
            if anchor not in facts.names:
                fail(f"--anchor: no entry is named {anchor!r}")
            settings = dataclasses.replace(settings, anchor=anchor)
        if bootstrap is not None:
            settings = dataclasses.replace(settings, bootstrap=bootstrap)
        standings = _standings(store, facts, settings, think_times=think_times)
        typer.echo(render(standings, format, wide=wide))


@tournament_app.command("show")
def show(db: DbOption) -> None:
    """The crosstable: each entry's score against each other, pentanomial counts, and each
    entry's think times and timeouts in each match."""
    with _open(db) as store:
        facts = _facts(store)
        games = store.games()
        typer.echo(crosstable(_standings(store, facts), games, facts.seats))
        typer.echo("")
        typer.echo(think_by_match(store.matches(), games, store.think_times()))


def _facts(store: Store) -> StoredFacts:
    try:
        return stored_facts(store)
    except StorageError as exc:
        fail(str(exc))


def _load(file: Path) -> TournamentConfig:
    try:
        return load_config(file)
    except ConfigError as exc:
        fail(str(exc))


def _open(db: Path) -> Store:
    try:
        return Store.open_for_reading(db)
    except StorageError as exc:
        fail(str(exc))


def _standings(
    store: Store,
    facts: StoredFacts,
    settings: RatingSettings | None = None,
    *,
    think_times: bool = True,
) -> Standings:
    try:
        return stored_standings(store, facts, settings, think_times=think_times)
    except RatingsError as exc:
        fail(f"cannot rate the entries: {exc}")


FAULT_KINDS = {"crash": "crash", "timeout": "timeout", "illegal": "illegal_action"}
"""``rerun --faults`` names and the game terminations they stand for."""


@tournament_app.command("rerun")
def rerun(
    db: DbOption,
    file: Annotated[
        Path | None,
        typer.Argument(help="The tournament file (default: the one its last run was made from)."),
    ] = None,
    entry: Annotated[
        list[str] | None,
        typer.Option(
            help="Only games this entry forfeited; repeat for several (default: every entry's)."
        ),
    ] = None,
    faults: Annotated[
        str, typer.Option(help="The faults whose games are played again, comma-separated.")
    ] = "crash,timeout,illegal",
    concurrency: ConcurrencyOption = None,
    shards: ShardsOption = None,
    cluster: ClusterOption = None,
    listen: ListenOption = "127.0.0.1:0",
    advertise: AdvertiseOption = None,
    workdir: Annotated[
        Path | None, typer.Option(help="Keep the bots' folders and logs here.")
    ] = None,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    quiet: QuietOption = False,
    wide: WideOption = False,
) -> None:
    """Delete the stored games that ended in these faults and play them again.

    The same seeds, with the entries as the tournament file defines them now: after a
    bot is fixed, its forfeits are replayed and its new program is the one the tournament
    goes on with. Prints the table, as `run` does.
    """
    kinds = _fault_kinds(faults)
    place = _Placement(concurrency, shards, cluster, listen, advertise, tls_cert, tls_key, workdir)
    config = _load(_tournament_file(db, file))
    names = [e.name for e in config.entries]
    for name in entry or []:
        if name not in names:
            fail(f"--entry: {config.path} has no entry {name!r}; entries are {', '.join(names)}")
    with _open(db) as reading:
        if reading.meta().get("fingerprint") != config.fingerprint():
            fail(
                f"{config.path} is not the tournament stored in {db} (its settings or entries "
                "differ): rerun replays games of the same tournament; restore the file, or "
                f"start a new tournament with `tavolo tournament run {config.path} --force`"
            )
    try:
        modes = confinements(config)
    except SandboxError as exc:
        fail(str(exc))
    chosen = list(entry or names)
    try:
        store = open_store(db, config, accept=chosen)
    except StorageError as exc:
        fail(str(exc))
    with store:
        config, _ = settle_seed(store, config)
        facts = _facts(store)
        doomed = _faulted(store.games(), facts.seats, kinds, set(entry) if entry else None)
        try:
            pending = _left_by_reruns(store)
            note_confinements(store, modes)
            store.delete_games(
                doomed,
                programs=config.programs(),
                why={"entries": sorted(entry) if entry else None, "faults": sorted(kinds)},
            )
        except StorageError as exc:
            fail(str(exc))
        words = _either(sorted(kinds))
        who = f", forfeited by {_either([repr(n) for n in sorted(entry)])}" if entry else ""
        typer.echo(f"deleted {len(doomed)} stored games that ended in {words}{who}")
        replay = {(g.match_id, g.number) for g in doomed} | pending
        if pending:
            typer.echo(f"{len(pending)} games deleted by an earlier rerun are still to play")
        for line in tournament_warnings(config, modes):
            typer.echo(f"warning: {line}", err=True)
        live = _LiveStandings(config, store, quiet)
        if replay:
            tables = _cluster_tables(place, config, modes, DEFAULT_LOGS_MB)
            runner = _set_up_run(config, store, live, place, tables, replay=frozenset(replay))
            summary = _play(runner, live, db, listen, tables=tables)
            finished = {(g.match_id, g.number) for g in store.games()}
            typer.echo(
                f"replayed {len(replay & finished)} of {len(replay)} games; "
                f"{store.game_count()} of {summary.games_total} stored in {db}"
            )
        typer.echo("")
        typer.echo(render(_standings(store, facts), TableFormat.PLAIN, wide=wide))
        _fail_if_always_faulted(store, facts)


def _remote(live: _LiveStandings, place: _Placement) -> tuple[bytes, bytes] | None:
    """``--tls-cert`` and ``--tls-key`` read; the output told what remote bots need: the
    address to connect to, and whether it serves TLS."""
    tls = read_tls(place.tls_cert, place.tls_key)
    live.over_tls = tls is not None
    live.listen, live.advertise = place.listen, place.advertise
    warn_if_unnamed(tls, place.tls_cert, place.advertise or place.listen)
    return tls


def _either(words: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return " or ".join(filter(None, [", ".join(words[:-1]), words[-1]]))


def _fault_kinds(text: str) -> dict[str, str]:
    """``--faults`` read: name -> the termination it stands for."""
    out = {}
    for word in (w.strip() for w in text.split(",")):
        if word not in FAULT_KINDS:
            fail(f"--faults: {word!r} is not a fault kind; choose from {', '.join(FAULT_KINDS)}")
        out[word] = FAULT_KINDS[word]
    return out


def _tournament_file(db: Path, given: Path | None) -> Path:
    """The tournament file to rerun with: ``given``, else the one stored by the last run."""
    if given is not None:
        return given
    with _open(db) as store:
        stored = store.meta().get("file")
    if stored is None:
        fail(
            f"{db} does not say which tournament file it was run from (its runs were made "
            f"before tavolo stored it): give it, `tavolo tournament rerun --db {db} FILE`"
        )
    path = Path(json.loads(stored))
    if not path.is_file():
        fail(
            f"the tournament file {path}, which {db} was last run from, is gone: give it "
            f"where it is now, `tavolo tournament rerun --db {db} FILE`"
        )
    return path


def _faulted(
    games: list[GameRow], seats: list[list[int]], kinds: dict[str, str], entries: set[str] | None
) -> list[GameRow]:
    """The games that ended in one of ``kinds``; with ``entries``, those forfeited by one."""
    ends = set(kinds.values())
    out = []
    for game in games:
        if game.termination not in ends:
            continue
        if entries is not None:
            side = forfeit_side(game, seats)
            if side is None or game.sides[side] not in entries:
                continue
        out.append(game)
    return out


def _left_by_reruns(store: Store) -> set[tuple[int, int]]:
    """Games an earlier rerun deleted that are not played yet (it was interrupted)."""
    text = store.meta().get("reruns")
    if text is None:
        return set()
    deleted = {(g["match"], g["game"]) for run in json.loads(text) for g in run["games"]}
    return deleted - {(g.match_id, g.number) for g in store.games()}
