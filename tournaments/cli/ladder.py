"""``tavolo ladder``: entries against the built-in rungs, with Elo and win rates (docs/bots.md)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from tabulate import tabulate

from referee.engine.deals import SeedError, check_seed
from referee.match.config import Limits
from referee.match.results import GameReport
from tournaments.cli.common import (
    Interrupted,
    always_faulted_line,
    fail,
    load_rules,
    main_fault,
    record_faults,
    run_interruptible,
)
from tournaments.cli.options import (
    DEADLINE_HELP,
    DealsOption,
    GameOption,
    JsonOption,
    QuietOption,
    RuleOption,
    SandboxOption,
    at_least,
)
from tournaments.ladder import (
    ANCHOR_ELO,
    DEFAULT_RUNGS,
    DEFAULT_SEED,
    DEFAULT_SETS,
    Ladder,
    LadderError,
    LadderGame,
    WinRate,
    check_rungs,
    faulted_everywhere,
    ladder_configs,
    ladder_game,
    ladder_table,
    meetings,
    participants,
    play_matches,
)
from tournaments.ratings import RatingsError

FEW_SETS = 5
"""Below this many duplicate sets the table says its intervals mean little."""


def ladder(
    entries: Annotated[
        list[str] | None,
        typer.Argument(
            help="Entries to measure: a built-in bot, `cmd:COMMAND` or a .toml bot manifest."
        ),
    ] = None,
    game: GameOption = "tressette",
    rule: RuleOption = None,
    seed: Annotated[
        str, typer.Option(help="Seed text; the default deals every ladder the same cards.")
    ] = DEFAULT_SEED,
    sets: Annotated[
        int,
        typer.Option(
            help="Duplicate sets per match (each: every seating of its deals).",
            callback=at_least(1),
        ),
    ] = DEFAULT_SETS,
    deals: DealsOption = None,
    deadline_ms: Annotated[int, typer.Option(help=DEADLINE_HELP, callback=at_least(1))] = 1000,
    rungs: Annotated[
        str, typer.Option(help="The rungs, built-in bots, comma-separated, weakest first.")
    ] = ",".join(DEFAULT_RUNGS),
    rung_matches: Annotated[
        bool, typer.Option(help="Also play each rung against each later rung.")
    ] = True,
    sandbox: SandboxOption = None,
    records: Annotated[
        Path | None, typer.Option(help="Write each match's record here, as NN.jsonl.")
    ] = None,
    workdir: Annotated[
        Path | None,
        typer.Option(help="Keep each bot's folder and logs here (default: kept only on a fault)."),
    ] = None,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Play the entries against the ladder's rungs and print each one's Elo and win rates.

    Each entry meets each rung in a duplicate match over gRPC (three or four players each
    alone: the rung takes every other seat). Every match deals the same seeded sets. Elo is
    the tournament tables' fit, the first rung held at 0, with 95% bootstrap intervals; the
    win rate against a rung is the share of games won, with a Wilson 95% interval.
    """
    rules = load_rules(game, rule)
    try:
        check_seed(seed)
    except SeedError as exc:
        fail(str(exc))
    given = list(entries or [])
    try:
        ladder_rungs = check_rungs([r.strip() for r in rungs.split(",") if r.strip()])
        players = participants(given, ladder_rungs)
        plan = meetings(players, given, rung_matches=rung_matches)
    except LadderError as exc:
        fail(str(exc))
    configs = ladder_configs(
        rules, seed, players, plan, sets=sets, deals=deals,
        limits=Limits(deadline_ms=deadline_ms), sandbox=sandbox,
    )  # fmt: skip
    games: list[LadderGame] = []
    logs = workdir or Path(tempfile.mkdtemp(prefix="tavolo-ladder-"))
    total = sum(c.games for c in configs)
    progress = Progress(
        TextColumn("[bold]games"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        disable=quiet or as_json, transient=True,
    )  # fmt: skip
    task = progress.add_task("games", total=total)
    warned: set[str] = set()

    def on_game(k: int, report: GameReport) -> None:
        games.append(ladder_game(plan, k, report))
        progress.update(task, completed=len(games))

    def on_warning(line: str) -> None:
        if line not in warned:
            warned.add(line)
            progress.console.print(f"warning: {line}", markup=False, highlight=False)

    try:
        with progress:
            run_interruptible(
                play_matches(configs, logs, records=records, on_game=on_game, on_warning=on_warning)
            )
    except (Interrupted, KeyboardInterrupt):
        fail(f"interrupted: the bots are stopped, their logs are in {logs}", 130)
    try:
        table = ladder_table(rules, seed, players, plan, games, sets=sets, deals=deals)
    except RatingsError as exc:
        fail(f"the ladder's games cannot be rated: {exc}")
    faulted = any(record_faults(g.report.lines) for g in games)
    if as_json:
        typer.echo(json.dumps(ladder_json(table, deadline_ms)))
    else:
        _print(table)
    if workdir is not None:
        typer.echo(f"bot logs: {logs}", err=as_json)
    elif faulted:
        typer.echo(f"bot logs: {logs} (kept: a bot faulted)", err=as_json)
    else:
        shutil.rmtree(logs, ignore_errors=True)  # nothing went wrong: nothing worth keeping
    _fail_if_always_faulted(games, table)


def _fail_if_always_faulted(games: list[LadderGame], table: Ladder) -> None:
    """Exit 1, a line for each, if a participant faulted in every game it played."""
    failing = faulted_everywhere(table.rules, games)
    played = {r.name: r.games for r in table.rows}
    for name, last in failing.items():
        line = always_faulted_line(name, played[name], main_fault(last.report.lines))
        typer.echo(f"error: {line}", err=True)
    if failing:
        raise typer.Exit(1)


def _cell(w: WinRate | None) -> str:
    if w is None:
        return ""
    low, high = w.interval
    return f"{w.wins}/{w.games} {w.rate:.2f} [{low:.2f}, {high:.2f}]"


def _print(table: Ladder) -> None:
    rows = []
    for r in table.rows:
        name = f"{r.name} (rung)" if r.rung else r.name
        f = r.faults
        rows.append(
            [
                name,
                f"{r.elo:.0f}",
                f"[{r.elo_low:.0f}, {r.elo_high:.0f}]",
                r.games,
                *(_cell(r.vs.get(rung)) for rung in table.rungs),
                f"{f.timeouts}/{f.illegal}/{f.crashes}",
            ]
        )
    headers = [
        "entry", "Elo", "95% interval", "games",
        *(f"wins vs {rung} [95%]" for rung in table.rungs), "timeouts/illegal/crashes",
    ]  # fmt: skip
    typer.echo(tabulate(rows, headers=headers, disable_numparse=True))
    typer.echo("")
    rules = table.rules
    per_game = "to the target" if table.deals is None else f"{table.deals} deal(s) a game"
    typer.echo(
        f"{rules.game}, seed {table.seed!r}: {table.games} games, {table.sets} duplicate set(s) "
        f"a match, {per_game}; Elo with {table.anchor} held at {ANCHOR_ELO:g}"
    )
    if table.sets < FEW_SETS:
        typer.echo(
            f"note: the Elo intervals resample {table.sets} duplicate set(s): too few for them "
            "to mean much (--sets)"
        )
    if rules.sides > 2:
        typer.echo(
            f"{rules.sides} players each alone: an entry sits against {rules.sides - 1} copies "
            f"of the rung, so even play wins 1/{rules.sides} of the games"
        )


def ladder_json(table: Ladder, deadline_ms: int) -> dict[str, Any]:
    """The ladder's figures as ``--json`` prints them."""
    return {
        "ladder": {
            "game": table.rules.game,
            "rules": table.rules.to_dict(),
            "seed": table.seed,
            "sets": table.sets,
            "deals": table.deals,
            "deadline_ms": deadline_ms,
            "rungs": list(table.rungs),
            "anchor": table.anchor,
            "anchor_elo": ANCHOR_ELO,
            "games": table.games,
        },
        "entries": [
            {
                "name": r.name,
                "bot": r.bot,
                "rung": r.rung,
                "elo": round(r.elo, 1),
                "elo_low": round(r.elo_low, 1),
                "elo_high": round(r.elo_high, 1),
                "games": r.games,
                "timeouts": r.faults.timeouts,
                "illegal": r.faults.illegal,
                "crashes": r.faults.crashes,
                "vs": {
                    rung: {
                        "games": w.games,
                        "wins": w.wins,
                        "draws": w.draws,
                        "win_rate": round(w.rate, 4),
                        "low": round(w.interval[0], 4),
                        "high": round(w.interval[1], 4),
                    }
                    for rung, w in r.vs.items()
                },
            }
            for r in table.rows
        ],
    }
