"""``tavolo tournament run|table|show``: tournaments from a TOML file, resumable in SQLite."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)

from referee.records import RecordError, verify_lines
from referee.sandbox import SandboxError
from tournaments.cli.common import book_to_check, crash_words, fail
from tournaments.config import ConfigError, RatingSettings, TournamentConfig, load_config
from tournaments.ratings import RatingsError
from tournaments.results import always_crashed, tallies
from tournaments.runner import (
    RunState,
    RunSummary,
    TournamentRun,
    confinements,
    note_confinements,
    open_store,
    tournament_warnings,
)
from tournaments.sprt import parse_bounds
from tournaments.storage import GameRow, StorageError, Store
from tournaments.tables import Standings, TableFormat, crosstable, render, standings

tournament_app = typer.Typer(
    no_args_is_help=True,
    help="Tournaments: run one from a TOML file, then print its table or crosstable.",
)

DbOption = Annotated[Path, typer.Option(help="The tournament's SQLite database.")]


def default_db(file: Path) -> Path:
    """Where a tournament file's results go by default: beside it, as NAME.db."""
    return file.with_suffix(".db")


@tournament_app.command("run")
def run(
    file: Annotated[Path, typer.Argument(help="The tournament file (TOML).")],
    db: Annotated[
        Path | None, typer.Option(help="SQLite database for the results (default: FILE.db).")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option(help="Matches at once (default: the file's, or one per core).")
    ] = None,
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
    listen: Annotated[
        str, typer.Option(help="The referee's address, e.g. 0.0.0.0:50051 for remote bots.")
    ] = "127.0.0.1:0",
    workdir: Annotated[
        Path | None, typer.Option(help="Keep the bots' folders and logs here.")
    ] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    """Run (or resume) a tournament and print its table.

    Each finished deal and game is stored as it ends; running the same command again
    after an interruption plays only what is missing.
    """
    config = _load(file)
    if concurrency is not None and concurrency < 1:
        fail(f"--concurrency must be 1 or more, got {concurrency}")
    bounds = _sprt_bounds(sprt, config, file)
    try:
        modes = confinements(config)
    except SandboxError as exc:
        fail(str(exc))
    path = db or default_db(file)
    try:
        store = open_store(path, config, force=force)
    except StorageError as exc:
        fail(str(exc))
    with store:
        try:
            note_confinements(store, modes)
        except StorageError as exc:
            fail(str(exc))
        if store.moved_aside is not None:
            typer.echo(f"the other tournament's database was moved to {store.moved_aside}")
        for line in tournament_warnings(config, modes):
            typer.echo(f"warning: {line}", err=True)
        already = store.game_count()
        live = _LiveStandings(config, store, quiet)
        try:
            runner = TournamentRun(
                config,
                store,
                concurrency=concurrency,
                listen=listen,
                workdir=workdir,
                sprt_bounds=bounds,
                on_progress=live.update,
                on_ticket=live.ticket,
            )
        except ValueError as exc:
            fail(str(exc))
        summary = _play(runner, live, path, listen)
        if already:
            typer.echo(f"resumed: {already} games were already stored")
        typer.echo(
            f"{summary.games_played} games played now, {store.game_count()} of "
            f"{summary.games_total} stored in {path}"
        )
        if summary.sprt is not None:
            s = summary.sprt
            verdict = f"accepted {s.decision}" if s.decision else "undecided"
            typer.echo(f"SPRT {sprt}: LLR {s.llr:.3f} in [{s.lower:.3f}, {s.upper:.3f}]: {verdict}")
        typer.echo("")
        facts = _facts(store)
        typer.echo(render(_standings(store, facts), TableFormat.PLAIN))
        _fail_if_always_crashed(store, facts)


def _fail_if_always_crashed(store: Store, facts: _Facts) -> None:
    """Exit 1, a line for each, if an entry crashed or never connected in every game."""
    failing = always_crashed(store.games(), facts.seats)
    if not failing:
        return
    details = {}
    wanted = {where: name for name, where in failing.items()}
    for match_id, number, text in store.records():
        name = wanted.get((match_id, number))
        if name is not None:
            lines = [json.loads(line) for line in text.splitlines()]
            forfeits = [line for line in lines if line.get("type") == "forfeit"]
            details[name] = str(forfeits[-1].get("detail", "")) if forfeits else ""
    for name in failing:
        typer.echo(f"error: entry {name!r} {crash_words(details.get(name, ''))}", err=True)
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


def _play(runner: TournamentRun, live: _LiveStandings, path: Path, listen: str) -> RunSummary:
    """Run the tournament under its progress bar; every failure is one line."""
    try:
        with live.progress:
            return asyncio.run(runner.run())
    except KeyboardInterrupt:
        fail(
            f"interrupted: every finished deal and game is in {path}; "
            "run the same command to resume",
            130,
        )
    except StorageError as exc:
        fail(str(exc))
    except (OSError, RuntimeError) as exc:
        fail(f"cannot run the referee on {listen}: {exc}")


class _LiveStandings:
    """The progress bar of a run, with the leaders' scores and the SPRT's LLR."""

    def __init__(self, config: TournamentConfig, store: Store, quiet: bool) -> None:
        self.config = config
        self.store = store
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TextColumn("games, ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[standing]}"),
            disable=quiet,
        )
        self.task = self.progress.add_task(config.name, total=None, standing="")
        self.names = [e.name for e in config.entries]
        self.seats = [config.rules.seats_of(s) for s in range(config.rules.sides)]
        self.shown = _Shown()

    def update(self, state: RunState) -> None:
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
            standing += (
                f"  LLR {state.sprt.llr:.2f} [{state.sprt.lower:.2f}, {state.sprt.upper:.2f}]"
            )
        self.progress.update(
            self.task, total=state.games_total, completed=state.games_done, standing=standing
        )

    def ticket(self, label: str, ticket: str, address: str) -> None:
        """Say where a remote seat connects, and with what ticket."""
        self.progress.console.print(
            f"remote seat {label}: connect to {address} with ticket {ticket}"
        )


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
        matches = store.matches()
        games: dict[int, list[GameRow]] = {}
        for game in store.games():
            games.setdefault(game.match_id, []).append(game)
        records: dict[int, list[str]] = {}
        for match_id, _number, text in store.records():
            records.setdefault(match_id, []).append(text)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        index = []
        for match in matches:
            played = games.get(match.id, [])
            name = f"match-{match.id}.jsonl"
            if played:
                (folder / name).write_text("".join(records[match.id]), encoding="utf-8")
            index.append(
                {
                    "match": match.id,
                    "round": match.round,
                    "entries": list(match.entries),
                    "seed": match.seed,
                    "file": name if played else None,
                    "games": [
                        {
                            "game": g.number,
                            "sides": list(g.sides),
                            "winner": g.winner,
                            "totals": list(g.totals),
                            "termination": g.termination,
                        }
                        for g in played
                    ],
                    "stopped": match.stopped,
                }
            )
        text = json.dumps({"database": db.name, "matches": index}, indent=1, ensure_ascii=False)
        (folder / "index.json").write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write to {folder}: {exc.strerror}", 1)
    count = sum(len(texts) for texts in records.values())
    typer.echo(f"{folder}: {count} game records in {len(records)} files, and index.json")


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
        int | None, typer.Option(help="Bootstrap resamples (default: the file's, 1000).")
    ] = None,
) -> None:
    """The standings: Elo with 95% intervals, LOS, results, points and faults."""
    with _open(db) as store:
        facts = _facts(store)
        settings = facts.ratings
        if anchor is not None:
            if anchor not in facts.names:
                fail(f"--anchor: no entry is named {anchor!r}")
            settings = dataclasses.replace(settings, anchor=anchor)
        if bootstrap is not None:
            if bootstrap < 0:
                fail(f"--bootstrap must be 0 or more, got {bootstrap}")
            settings = dataclasses.replace(settings, bootstrap=bootstrap)
        typer.echo(render(_standings(store, facts, settings), format))


@tournament_app.command("show")
def show(db: DbOption) -> None:
    """The crosstable: each entry's score against each other, and pentanomial counts."""
    with _open(db) as store:
        facts = _facts(store)
        typer.echo(crosstable(_standings(store, facts), store.games(), facts.seats))


@dataclasses.dataclass(frozen=True)
class _Facts:
    name: str
    names: list[str]
    seats: list[list[int]]
    ratings: RatingSettings
    lower_wins: bool
    sandbox: dict[str, str]


def _facts(store: Store) -> _Facts:
    try:
        meta = store.meta()
        return _Facts(
            meta.get("name", "?"),
            store.fact("entries"),
            store.fact("seats"),
            RatingSettings(**store.fact("ratings")),
            bool(json.loads(meta.get("lower_wins", "false"))),
            json.loads(meta.get("sandbox", "{}")),
        )
    except (StorageError, TypeError, ValueError) as exc:
        fail(f"{store.path}: not a database of this version of tavolo ({exc})")


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


def _standings(store: Store, facts: _Facts, settings: RatingSettings | None = None) -> Standings:
    try:
        return standings(
            facts.name,
            facts.names,
            store.games(),
            facts.seats,
            settings or facts.ratings,
            lower_wins=facts.lower_wins,
            sandbox=facts.sandbox,
        )
    except RatingsError as exc:
        fail(f"cannot rate the entries: {exc}")
