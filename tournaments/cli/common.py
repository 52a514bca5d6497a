"""What every command shares: one-line errors, reading rule options, a referee's channel."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import grpc
import typer

from referee.engine.rules import Rules, RulesError, preset

GAME_HELP = (
    "Game preset: tressette, tressette-muto, treseta, tressette-briscola, tressette-a-tre, "
    "tressette-a-due, ciapano or calabresella."
)
RULE_HELP = "Set a rule knob, as knob=value; repeat for several."
TLS_CA_HELP = "PEM root certificate of a referee that serves TLS."


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


def referee_channel(referee: str, tls_ca: Path | None) -> grpc.Channel:
    """A channel to a running referee: plaintext, or TLS trusting ``tls_ca``."""
    if tls_ca is None:
        return grpc.insecure_channel(referee)
    try:
        root = tls_ca.read_bytes()
    except OSError as exc:
        fail(f"cannot read {tls_ca}: {exc.strerror}")
    return grpc.secure_channel(referee, grpc.ssl_channel_credentials(root))
