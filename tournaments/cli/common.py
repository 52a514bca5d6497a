"""What every command shares: one-line errors, reading rule options, a referee's channel."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import dataclasses
import json
import re
from pathlib import Path
from typing import NoReturn

import grpc
import typer

from referee.deal_book_files import read_book, read_book_bytes
from referee.engine.cards import CARD_NAMES
from referee.engine.deal_book import BookError, DealBook, parse_book
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


BOOK_HELP = (
    "A deal book (JSON Lines, each line as `tavolo deal --json` prints it): deal its lines "
    "in order instead of seeded deals."
)
HANDS_HELP = (
    "Play one deal from these hands: seats split by ';', cards by ',' "
    "(e.g. '3D,AD,...;...;...;...'). Needs --dealer."
)


def given_deals(
    rules: Rules,
    book: Path | None,
    hands: str | None,
    dealer: int | None,
    trump: str | None,
    deals: int | None,
) -> tuple[DealBook | None, int | None]:
    """The deal book of ``--book`` or ``--hands`` (a book of one line), and the deals per
    game; a clean exit naming the problem."""
    if hands is None:
        if dealer is not None or trump is not None:
            fail("--dealer and --trump go with --hands")
        if book is None:
            return None, deals
        try:
            return read_book(book, rules), deals
        except BookError as exc:
            fail(str(exc))
    if book is not None:
        fail("give --book or --hands, not both")
    if deals not in (None, 1):
        fail(f"--hands plays a single deal, so --deals must be 1 or left out, not {deals}")
    if dealer is None:
        fail("--hands needs --dealer, the seat that dealt them")
    if rules.family.leftover == "stock":
        fail(f"{rules.game} needs the stock in its order: give the deal in a --book")
    seats = [[c for c in re.split(r"[,\s]+", seat.strip()) if c] for seat in hands.split(";")]
    line: dict[str, object] = {"dealer": dealer, "hands": seats}
    if rules.family.leftover:
        # The widow or the monte: the cards no hand holds.
        held = {c for seat in seats for c in seat}
        line[rules.family.leftover] = [c for c in CARD_NAMES if c not in held]
    if trump is not None:
        line["trump"] = trump
    data = (json.dumps(line) + "\n").encode()
    try:
        return parse_book(data, rules, "--hands"), 1
    except BookError as exc:
        fail(f"--hands: {exc.message}")


def book_to_check(book: Path | None) -> tuple[bytes, str] | None:
    """``--book`` of the verify commands: the book's bytes and name, or None without one."""
    if book is None:
        return None
    try:
        return read_book_bytes(book), str(book)
    except BookError as exc:
        fail(str(exc))
