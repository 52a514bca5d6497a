"""What every command shares: one-line errors, reading rule options, a referee's channel."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import dataclasses
from pathlib import Path
from typing import NoReturn

import grpc
import typer

from referee.engine.rules import Rules, RulesError, preset
from referee.entries import Entry
from referee.sandbox import SandboxMode

GAME_HELP = (
    "Game preset: tressette, tressette-muto, treseta, tressette-briscola, tressette-a-tre, "
    "tressette-a-due, ciapano, calabresella or tressette-study."
)
RULE_HELP = "Set a rule knob, as knob=value; repeat for several."
TLS_CA_HELP = "PEM root certificate of a referee that serves TLS."
SANDBOX_HELP = (
    "How bot processes are confined: bwrap (a bubblewrap sandbox each, the default) or off. "
    "A manifest may ask for off; this option overrides it."
)


def crash_words(detail: str) -> str:
    """One line for an entry whose bot crashed in every game, from a forfeit's detail
    (e.g. ``never connected: exit status 1; stderr ends:\n...``)."""
    head, _, tail = detail.partition("; stderr ends:\n")
    last = tail.strip().splitlines()[-1] if tail.strip() else ""
    words = f"crashed or never connected in every game it played ({head})"
    return words + (f"; its stderr ends: {last}" if last else "; it wrote no stderr")


def confined(entries: tuple[Entry, ...], sandbox: SandboxMode | None) -> tuple[Entry, ...]:
    """The entries, with ``--sandbox`` (when given) overriding what their manifests ask."""
    if sandbox is None:
        return entries
    return tuple(dataclasses.replace(e, sandbox=None) for e in entries)


def read_token_file(path: Path | None) -> str | None:
    """The admin token in ``path`` (first line), or None without a path."""
    if path is None:
        return None
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        fail(f"cannot read the admin token file {path}: {exc.strerror}")
    if not token:
        fail(f"the admin token file {path} is empty")
    return token


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
