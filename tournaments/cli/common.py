"""What every command shares: one-line errors and reading rule options."""

from __future__ import annotations

from typing import NoReturn

import typer

from referee.engine.rules import Rules, RulesError, preset

GAME_HELP = (
    "Game preset: tressette, tressette-muto, treseta, tressette-briscola, tressette-a-tre, "
    "tressette-a-due, ciapano or calabresella."
)
RULE_HELP = "Set a rule knob, as knob=value; repeat for several."


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one error line to stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def load_rules(game: str, knobs: list[str] | None) -> Rules:
    """The preset ``game`` with the ``knob=value`` options applied, or a clean exit."""
    try:
        return preset(game).with_knobs(knobs or [])
    except RulesError as exc:
        fail(str(exc))
