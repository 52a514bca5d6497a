"""``tavolo seed``: make a strong seed, and commit to it before play (docs/deals.md §6)."""

from __future__ import annotations

import json
import re
import secrets
from typing import Annotated

import typer

from referee.engine.deals import SeedError, seed_commitment
from tournaments.cli.common import fail
from tournaments.cli.options import JsonOption

seed_app = typer.Typer(
    no_args_is_help=True,
    help="Make a seed and a commitment to publish before play; check one after.",
)

STRONG_SEED_CHARS = 16
"""Shorter seeds draw a warning: whoever has the commitment could try every short seed."""
_HEX64 = re.compile(r"[0-9a-f]{64}")


def _commitment(seed: str) -> str:
    try:
        return seed_commitment(seed)
    except SeedError as exc:
        fail(str(exc))


@seed_app.command("new")
def new(as_json: JsonOption = False) -> None:
    """A random 128-bit seed and its commitment: publish the commitment, keep the seed."""
    seed = secrets.token_hex(16)
    commitment = seed_commitment(seed)
    if as_json:
        typer.echo(json.dumps({"seed": seed, "commitment": commitment}))
        return
    typer.echo(f"seed:       {seed}   (keep it secret until play is over)")
    typer.echo(f"commitment: {commitment}   (publish it now)")


@seed_app.command("commit")
def commit(seed: Annotated[str, typer.Argument(help="The seed text.")]) -> None:
    """The commitment to a seed you chose (SHA-256, docs/deals.md §6)."""
    commitment = _commitment(seed)
    if len(seed) < STRONG_SEED_CHARS:
        typer.echo(
            f"warning: a seed of {len(seed)} characters may be guessed from its commitment; "
            "`tavolo seed new` makes one that cannot",
            err=True,
        )
    typer.echo(commitment)


@seed_app.command("check")
def check(
    seed: Annotated[str, typer.Argument(help="The seed, as revealed after play.")],
    commitment: Annotated[str, typer.Argument(help="The commitment published before play.")],
) -> None:
    """Exit 0 if the seed is the one committed to; 1, with one error line, if it is not."""
    wanted = commitment.strip().lower()
    if not _HEX64.fullmatch(wanted):
        fail(f"the commitment must be 64 hex digits, got {commitment!r}")
    if _commitment(seed) != wanted:
        fail(f"seed {seed!r} does not match commitment {wanted}", code=1)
    typer.echo(f"seed {seed!r} matches commitment {wanted}")
