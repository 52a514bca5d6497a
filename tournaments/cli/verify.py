"""``tavolo verify``: replay game records through the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from referee.records import RecordError, verify_file


def verify(
    files: Annotated[list[Path], typer.Argument(help="Game record files (JSON Lines).")],
) -> None:
    """Check every action, derived value and dealt card of each record (docs/records.md)."""
    failed = 0
    for path in files:
        try:
            done = verify_file(path)
        except RecordError as exc:
            typer.echo(f"error: {exc}", err=True)
            failed += 1
            continue
        outcome = done.outcome
        winner = "a draw" if outcome.winner is None else f"side {outcome.winner} wins"
        typer.echo(
            f"{path}: ok, {done.lines} lines, {outcome.deals} deals, {winner} "
            f"({outcome.termination.value}), totals {list(outcome.totals)}"
        )
    if failed:
        raise typer.Exit(1)
