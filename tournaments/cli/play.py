"""``tavolo play``: a game between entries, with its record."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import IO, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from tabulate import tabulate

from referee.engine.deals import SeedError, check_seed
from referee.engine.game import GameState
from referee.local_play import EntriesError, play_game, seat_names
from referee.players import UnknownPlayerError, make_player
from tournaments.cli.common import GAME_HELP, RULE_HELP, fail, load_rules


def play(
    entries: Annotated[
        list[str], typer.Argument(help="One built-in player per side, e.g. random.")
    ],
    seed: Annotated[str, typer.Option(help="Seed text; the same seed plays the same game.")],
    game: Annotated[str, typer.Option(help=GAME_HELP)] = "tressette",
    deals: Annotated[
        int | None, typer.Option(help="Play exactly N deals instead of up to the target.")
    ] = None,
    record: Annotated[Path | None, typer.Option(help="Write the game record here.")] = None,
    rule: Annotated[list[str] | None, typer.Option(help=RULE_HELP)] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    """Play one game between built-in players and print the result table."""
    rules = load_rules(game, rule)
    if deals is not None and deals < 1:
        fail(f"--deals must be 1 or more, got {deals}")
    try:
        names = seat_names(rules, entries)
        check_seed(seed)
        for name in entries:
            make_player(name, seed)
    except (EntriesError, SeedError, UnknownPlayerError) as exc:
        fail(str(exc))
    with contextlib.ExitStack() as stack:
        stream: IO[str] | None = None
        if record is not None:
            try:
                stream = stack.enter_context(open(record, "w", encoding="utf-8", newline="\n"))
            except OSError as exc:
                fail(f"cannot write record {record}: {exc.strerror}")
        progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[score]}"),
            TimeElapsedColumn(),
            disable=quiet,
            transient=True,
        )
        stack.enter_context(progress)
        task = progress.add_task("deals", total=deals, score="")

        def on_deal(state: GameState) -> None:
            progress.update(task, advance=1, score=f"totals {state.totals}")

        outcome = play_game(rules, seed, entries, deals=deals, record=stream, on_deal=on_deal)
    rows = []
    for side in range(rules.sides):
        seats = [s for s in range(rules.players) if rules.side_of(s) == side]
        rows.append(
            [
                side,
                " + ".join(map(str, seats)),
                names[seats[0]],
                outcome.totals[side],
                "winner" if outcome.winner == side else "",
            ]
        )
    typer.echo(tabulate(rows, headers=["side", "seats", "entry", "points", ""]))
    winner = (
        "draw" if outcome.winner is None else f"side {outcome.winner} ({entries[outcome.winner]})"
    )
    typer.echo(f"\n{outcome.deals} deals, {outcome.termination.value}: {winner}")
    if record is not None:
        typer.echo(f"record: {record}")
