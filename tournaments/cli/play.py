"""``tavolo play``: a match between entries over real gRPC, with its record; with
``--in-process``, the same match between built-in players and ``py:`` entries inside this
process."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from tabulate import tabulate

from referee.engine.deals import SeedError, check_seed
from referee.engine.game_base import Outcome
from referee.engine.rules import Rules
from referee.entries import BUILT_IN_BOTS, Entry, EntryError, parse_entry
from referee.local_play import entry_player, play_match
from referee.match.config import (
    TEMPO_FREE,
    Limits,
    MatchConfig,
    book_problem,
    book_reuse,
    parse_tempo,
)
from referee.match.faults import FaultPolicy
from referee.match.match import Match
from referee.match.results import GameReport, MatchResult
from referee.match.table import rotations
from referee.players import PlayerError, UnknownPlayerError
from referee.records import open_record
from referee.sandbox.bot_process import LogBudget
from referee.sandbox.bwrap import SandboxMode
from referee.service.server import start_referee
from tournaments.cli.common import (
    Fault,
    Interrupted,
    always_faulted_line,
    check_connect_timeout,
    confined,
    fail,
    given_deals,
    load_rules,
    main_fault,
    read_tls,
    record_faults,
    run_interruptible,
    warn_if_unnamed,
)
from tournaments.cli.grpc_log import grpc_lines_counted
from tournaments.cli.options import (
    CONNECT_HELP,
    DEADLINE_HELP,
    DEFAULT_CONNECT_TIMEOUT,
    BookOption,
    DealsOption,
    GameOption,
    HandsOption,
    RuleOption,
    SandboxOption,
    TlsCertOption,
    TlsKeyOption,
    at_least,
)
from tournaments.results import always_faulted
from tournaments.runner import DEFAULT_LOGS_MB
from tournaments.storage import GameRow


def play(
    entries: Annotated[
        list[str],
        typer.Argument(
            help=f"One entry per side: a built-in bot ({', '.join(sorted(BUILT_IN_BOTS))}), "
            "remote, `cmd:COMMAND`, `py:MODULE:NAME` or a .toml bot manifest."
        ),
    ],
    seed: Annotated[str, typer.Option(help="Seed text; the same seed deals the same cards.")],
    game: GameOption = "tressette",
    deals: DealsOption = None,
    sets: Annotated[
        int,
        typer.Option(
            help="Duplicate sets: each plays its deals once per seating of the entries.",
            callback=at_least(1),
        ),
    ] = 1,
    record: Annotated[Path | None, typer.Option(help="Write the match record here.")] = None,
    rule: RuleOption = None,
    book: BookOption = None,
    hands: HandsOption = None,
    dealer: Annotated[int | None, typer.Option(help="With --hands: the seat that dealt.")] = None,
    trump: Annotated[
        str | None, typer.Option(help="With --hands and the briscola: the dealer's shown card.")
    ] = None,
    deadline_ms: Annotated[int, typer.Option(help=DEADLINE_HELP)] = 1000,
    time_bank_ms: Annotated[
        int, typer.Option(help="Extra time per bot for the match, spent on overruns.")
    ] = 0,
    max_attempts: Annotated[int, typer.Option(help="Illegal actions allowed per decision.")] = 3,
    on_fault: Annotated[
        FaultPolicy,
        typer.Option(
            help="On a timeout, illegal actions or a crash: forfeit the game or play at random."
        ),
    ] = FaultPolicy.FORFEIT,
    tempo: Annotated[
        str,
        typer.Option(
            help="free: each action is shown when it comes; fixed:MS: no sooner than MS "
            "after its request (MS at the deadline hides every think time from the partner)."
        ),
    ] = TEMPO_FREE,
    ponder: Annotated[
        bool,
        typer.Option(
            help="Let sandboxed bots run while others are on move; by default each is "
            "stopped except for its own decisions (docs/security.md)."
        ),
    ] = False,
    connect_timeout: Annotated[
        float, typer.Option(help=CONNECT_HELP + " A remote bot's window opens when it does.")
    ] = DEFAULT_CONNECT_TIMEOUT,
    grace: Annotated[float, typer.Option(help="Seconds a dropped bot has to reconnect.")] = 5.0,
    restart_crashed: Annotated[
        bool,
        typer.Option(
            help="Start a bot process that crashed again before the next game "
            "(the game it crashed in is lost either way)."
        ),
    ] = True,
    listen: Annotated[
        str, typer.Option(help="Address of the referee, e.g. 0.0.0.0:50051 for remote bots.")
    ] = "127.0.0.1:0",
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    workdir: Annotated[
        Path | None,
        typer.Option(
            help="Keep each bot's folder and logs here (default: a new temporary folder, "
            "kept only if a bot faulted; the output says where)."
        ),
    ] = None,
    in_process: Annotated[
        bool,
        typer.Option(
            help="Play built-in players and py: entries inside this process, without gRPC "
            "or bot processes: the same games, seats and record as over gRPC, faster."
        ),
    ] = False,
    sandbox: SandboxOption = None,
    logs_mb: Annotated[
        int,
        typer.Option(
            help="What the bots' logs of this match may take together (restarted processes' "
            "included); beyond it each log is cut with a line saying so.",
            callback=at_least(1),
        ),
    ] = DEFAULT_LOGS_MB,
    quiet: Annotated[
        bool,
        typer.Option(
            help="No progress bar, and of the games only those where something went wrong."
        ),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the result as JSON (every entry's tally and every game), nothing else.",
        ),
    ] = False,
) -> None:
    """Play a match between entries and print the result table.

    In a partnership game each entry takes both seats of one side, as two processes.
    Each duplicate set plays the same seeded deals once per arrangement of the entries
    over the sides (two sides: twice; three or four players each alone: 6 or 24 times).
    With --in-process the built-in players and py: entries play the same games here,
    without processes.
    """
    rules = load_rules(game, rule)
    try:
        check_seed(seed)
    except SeedError as exc:
        fail(str(exc))
    if len(entries) != rules.sides:
        fail(f"{rules.game} needs {rules.sides} entries, one per side; got {len(entries)}")
    dealt, deals = given_deals(rules, book, hands, dealer, trump, deals)
    problem = book_problem(dealt, deals, sets)
    if problem:
        fail(problem.replace("duplicate sets", "duplicate sets (--sets)"))
    if deadline_ms < 1 or max_attempts < 1 or time_bank_ms < 0:
        fail("--deadline-ms and --max-attempts must be 1 or more, --time-bank-ms 0 or more")
    if in_process:
        # Nothing is timed here, but each request says --deadline-ms: pimc sizes its
        # search by it, as it does over gRPC.
        config = MatchConfig(
            rules, seed, _in_process(entries), deals, sets, Limits(deadline_ms=deadline_ms),
            book=dealt,
        )  # fmt: skip
        reuse = book_reuse(dealt, deals, sets)
        if reuse:
            typer.echo(f"warning: {reuse}", err=True)
        _play_in_process(config, record, Shown(quiet or as_json, as_json))
        return
    check_connect_timeout(connect_timeout)
    tls = read_tls(tls_cert, tls_key)
    warn_if_unnamed(tls, tls_cert, listen)
    try:
        tempo_ms = parse_tempo(tempo)
    except ValueError as exc:
        fail(f"--tempo: {exc}")
    try:
        parsed = tuple(parse_entry(e) for e in entries)
    except EntryError as exc:
        fail(str(exc))
    limits = Limits(
        deadline_ms=deadline_ms,
        time_bank_ms=time_bank_ms,
        max_attempts=max_attempts,
        connect_timeout=connect_timeout,
        grace=grace,
        on_fault=on_fault,
        restart_crashed=restart_crashed,
        tempo_ms=tempo_ms,
        ponder=ponder,
    )
    config = MatchConfig(
        rules,
        seed,
        confined(parsed, sandbox),
        deals,
        sets,
        limits,
        sandbox=sandbox or SandboxMode.BWRAP,
        allow_unconfined=True,
        book=dealt,
    )
    reports: list[GameReport] = []
    logs = workdir or Path(tempfile.mkdtemp(prefix="tavolo-play-"))
    with contextlib.ExitStack() as stack:
        stream = _open_record(stack, record)
        try:
            stack.enter_context(grpc_lines_counted(tls is not None))
            result = run_interruptible(
                _run(config, (listen, tls), stream, logs, quiet or as_json, reports.append, logs_mb)
            )
        except (Interrupted, KeyboardInterrupt):
            # The bots were stopped on the way out; every finished line is in the record.
            fail(
                f"interrupted: the bots are stopped, their logs are in {logs}, and the record "
                "keeps what was played",
                130,
            )
    shown = Shown(quiet or as_json, as_json)
    faulted = result.incidents or any(record_faults(r.lines) for r in reports)
    kept = str(logs) if workdir is not None or faulted else None
    _print_result(result, rules, config, reports, shown, record, kept)
    if workdir is not None and not as_json:
        typer.echo(f"bot logs: {logs}")
    elif faulted and not as_json:
        typer.echo(f"bot logs: {logs} (kept: a bot faulted)")
    else:
        shutil.rmtree(logs, ignore_errors=True)  # nothing went wrong: nothing worth keeping
    _fail_if_always_faulted(result, rules, reports)


def _fail_if_always_faulted(result: MatchResult, rules: Rules, reports: list[GameReport]) -> None:
    """Exit 1, a line for each, if an entry faulted in every game it played."""
    names = [s.name for s in result.stats]
    rows = [
        GameRow(
            0, r.number, r.set_number, tuple(names[e] for e in r.sides), r.outcome.winner,
            r.outcome.totals, r.outcome.termination.value, r.forfeit_seat, r.outcome.deals,
            {names[e]: f for e, f in enumerate(r.faults) if any(f)},
        )
        for r in reports
    ]  # fmt: skip
    seats = [rules.seats_of(side) for side in range(rules.sides)]
    failing = always_faulted(rows, seats)
    by_number = {r.number: r for r in reports}
    for name, (played, _, number) in failing.items():
        fault = main_fault(by_number[number].lines)
        typer.echo(f"error: {always_faulted_line(name, played, fault)}", err=True)
    if failing:
        raise typer.Exit(1)


def _open_record(stack: contextlib.ExitStack, record: Path | None) -> IO[str] | None:
    if record is None:
        return None
    try:
        return stack.enter_context(open_record(record))
    except OSError as exc:
        fail(f"cannot write record {record}: {exc.strerror}")


async def _run(
    config: MatchConfig,
    server: tuple[str, tuple[bytes, bytes] | None],
    stream: IO[str] | None,
    workdir: Path | None,
    quiet: bool,
    on_game: Callable[[GameReport], None],
    logs_mb: int,
) -> MatchResult:
    listen, tls = server
    try:
        referee = await start_referee(listen, tls=tls)
    except (OSError, RuntimeError) as exc:
        fail(f"cannot listen on {listen}: {exc}")
    over = " over TLS (give it TAVOLO_TLS_CA)" if tls else ""
    games = config.sets * rotations(config.rules)
    total = config.deals * games if config.deals else None
    progress = _progress(quiet)
    task = progress.add_task("deals", total=total, score=f"game 1 of {games}")

    def on_deal(match: Match) -> None:
        progress.update(
            task,
            completed=match.deals_done,
            score=f"game {len(match.result.outcomes) + 1} of {games}",
        )

    def on_ticket(label: str, ticket: str) -> None:
        progress.console.print(
            f"remote seat {label}: connect to {referee.address}{over} with ticket {ticket}",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )

    try:
        match = Match(
            referee,
            config,
            record=stream,
            workdir=workdir,
            on_deal=on_deal,
            on_ticket=on_ticket,
            on_game_recorded=on_game,
            on_notice=lambda line: progress.console.print(
                line, soft_wrap=True, markup=False, highlight=False
            ),
            # Every process's logs together, however often a crashing bot is started again.
            log_budget=LogBudget(logs_mb),
        )
        for line in match.warnings:
            typer.echo(f"warning: {line}", err=True)
        with progress:
            return await match.run()
    finally:
        await referee.stop()


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[score]}"),
        TimeElapsedColumn(),
        # Not a terminal (a pipe, a file, CI): no bar, and no blank line where it was.
        disable=quiet or not sys.stdout.isatty(),
        transient=True,
    )


@dataclass(frozen=True)
class Shown:
    """What ``tavolo play`` prints besides the table."""

    quiet: bool
    """No progress bar and no line per game."""
    json: bool
    """The result as JSON, and nothing else on stdout."""


def _termination(outcome: Outcome) -> str:
    return outcome.termination.value.replace("_", " ")


def _print_result(
    result: MatchResult,
    rules: Rules,
    config: MatchConfig,
    reports: list[GameReport],
    shown: Shown,
    record: Path | None,
    logs: str | None = None,
) -> None:
    games = list(zip(result.numbers, result.outcomes, result.sides, strict=True))
    names = [s.name for s in result.stats]
    if shown.json:
        data = {
            "entries": [
                {
                    "name": s.name, "games": s.games, "wins": s.wins, "draws": s.draws,
                    "losses": s.losses, "points": s.points, "deals": s.deals,
                    "timeouts": s.timeouts, "illegal": s.illegal, "crashes": s.crashes,
                }
                for s in result.stats
            ],
            "games": [
                {
                    "game": number, "sides": [names[e] for e in sides],
                    "totals": list(outcome.totals), "deals": outcome.deals,
                    "termination": outcome.termination.value,
                    "winner": None if outcome.winner is None else names[sides[outcome.winner]],
                    "places": list(outcome.places),
                }
                for number, outcome, sides in games
            ],
            "record": None if record is None else str(record),
            "bot_logs": logs,
        }  # fmt: skip
        typer.echo(json.dumps(data, indent=1))
        return
    rows = []
    for stats in result.stats:
        per_deal = stats.points / stats.deals if stats.deals else 0.0
        rows.append(
            [
                stats.name,
                stats.games,
                f"{stats.wins}-{stats.draws}-{stats.losses}",
                stats.points,
                f"{per_deal:.2f}",
                f"{stats.timeouts}/{stats.illegal}/{stats.crashes}",
            ]
        )
    typer.echo(
        tabulate(
            rows,
            headers=[
                "entry",
                "games",
                "W-D-L",
                "points",
                "points/deal",
                "timeouts/illegal/crashes",
            ],
        )
    )
    faults = {r.number: record_faults(r.lines) for r in reports}
    # Quiet: only the games where something went wrong (a fault is never hidden).
    listed = [g for g in games if not shown.quiet or _shown(faults.get(g[0], []))]
    if listed or result.incidents:
        typer.echo("")
    for number, outcome, sides in listed:
        seated = " vs ".join(names[e] for e in sides)
        winner = "a draw" if outcome.winner is None else f"{names[sides[outcome.winner]]} won"
        dealt = f"{outcome.deals} deal{'s' if outcome.deals != 1 else ''}"
        typer.echo(
            f"game {number}: {seated}: {list(outcome.totals)} after {dealt}, "
            f"{_termination(outcome)}: {winner}"
        )
        for fault in _shown(faults.get(number, [])):
            for line in _fault_lines(fault):
                typer.echo(f"  {line}")
    for label, kind, detail in result.incidents:
        if kind == "never_connected":
            continue  # each game it cost says so above, with the bot's stderr
        typer.echo(f"incident {label}: {kind}: {detail.splitlines()[0] if detail else ''}")
    if record is not None:
        typer.echo(f"record: {record}")


def _shown(faults: list[Fault]) -> list[Fault]:
    """A game's faults to print: a seat's forfeit says it all; else its fault incidents."""
    forfeited = {f.seat for f in faults if f.forfeit}
    return [f for f in faults if f.forfeit or f.seat not in forfeited]


def _fault_lines(fault: Fault) -> list[str]:
    """A fault as printed under its game: ``fault:`` and what the record says."""
    first, *rest = fault.lines()
    return [f"fault: {first}", *rest]


def _in_process(entries: list[str]) -> tuple[Entry, ...]:
    """The entries of an in-process match: built-in players and ``py:`` entries, each
    checked (a ``py:`` entry's module imported) before anything is played."""
    out = []
    for text in entries:
        try:
            entry = parse_entry(text) if text.startswith("py:") else Entry(text, built_in=True)
            entry_player(entry)
        except (EntryError, UnknownPlayerError) as exc:
            fail(str(exc))
        out.append(entry)
    return tuple(out)


def _play_in_process(config: MatchConfig, record: Path | None, shown: Shown) -> None:
    """The match between built-in players and py: entries in this process (the quick
    path, no processes); a player's fault stops it, exit code 1."""
    games = config.games
    with contextlib.ExitStack() as stack:
        stream = _open_record(stack, record)
        progress = stack.enter_context(_progress(shown.quiet))
        total = config.deals * games if config.deals else None
        task = progress.add_task("deals", total=total, score=f"game 1 of {games}")

        def on_deal(done: int, game: int) -> None:
            progress.update(task, completed=done, score=f"game {game} of {games}")

        try:
            result = play_match(config, record=stream, on_deal=on_deal)
        except PlayerError as exc:
            kept = "" if record is None else f"; the record keeps what was played ({record})"
            fail(f"{exc}{kept}", 1)
        except KeyboardInterrupt:
            fail("interrupted: the record keeps what was played", 130)
    _print_result(result, config.rules, config, [], shown, record)
