"""``tavolo verify``: replay game records through the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from referee.records import RecordError, verify_file
from tournaments.cli.common import book_to_check


def verify(
    files: Annotated[list[Path], typer.Argument(help="Game record files (JSON Lines).")],
    book: Annotated[
        Path | None,
        typer.Option(help="The deal book the games were dealt from: check their hands against it."),
    ] = None,
) -> None:
    """Check every action, derived value and dealt card of each record (docs/records.md)."""
    given = book_to_check(book)
    failed = unreadable = 0
    for path in files:
        if not path.is_file():
            # Not there at all is a mistake in the command (exit 2, as everywhere); a
            # record that is there and does not verify is what this command finds (exit 1).
            typer.echo(f"error: {path}: no such file", err=True)
            unreadable += 1
            continue
        try:
            done = verify_file(path, book=given)
        except RecordError as exc:
            typer.echo(f"error: {exc}", err=True)
            failed += 1
            continue
        games = []
        for outcome in done.outcomes:
            winner = "a draw" if outcome.winner is None else f"side {outcome.winner} wins"
            games.append(
                f"{outcome.deals} deals, {winner} ({outcome.termination.value}), "
                f"totals {list(outcome.totals)}"
            )
        if len(games) == 1:
            typer.echo(f"{path}: ok, {done.lines} lines, {games[0]}")
        else:
            typer.echo(f"{path}: ok, {done.lines} lines, {len(games)} games")
            for number, text in enumerate(games, 1):
                typer.echo(f"  game {number}: {text}")
        for digest in done.books:
            if done.book_checked:
                typer.echo(f"  dealt from the book {book} (SHA-256 {digest}): hands checked")
            else:
                typer.echo(
                    f"  dealt from a book (SHA-256 {digest}): the hands were taken from the "
                    "record, not checked; give --book FILE to check them"
                )
    if unreadable:
        raise typer.Exit(2)
    if failed:
        raise typer.Exit(1)
