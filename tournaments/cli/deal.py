"""``tavolo deal``: show one seeded deal."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from referee.engine.deal_book import deal_line
from referee.engine.deals import SeedError, check_seed, dealer_of
from tournaments.cli.common import fail, load_rules
from tournaments.cli.options import GameOption, JsonOption, RuleOption, at_least


def deal(
    seed: Annotated[str, typer.Option(help="Seed text.")],
    game: GameOption = "tressette",
    number: Annotated[
        int, typer.Option("--deal", help="Deal number, from 1.", callback=at_least(1))
    ] = 1,
    as_json: JsonOption = False,
    rule: RuleOption = None,
) -> None:
    """Show the cards of deal N of a seed, as anyone can reproduce them (docs/deals.md)."""
    rules = load_rules(game, rule)
    try:
        check_seed(seed)
    except SeedError as exc:
        fail(str(exc))
    dealer = dealer_of(rules.game, seed, number, rules.players)
    # The family deals as its games do (Calabresella: three hands from the eldest).
    dealt = rules.family.deal(rules, seed, number, dealer)
    out: dict[str, Any] = {
        "game": rules.game,
        "seed": seed,
        "deal": number,
        **deal_line(dealt, rules),
    }
    if as_json:
        typer.echo(json.dumps(out, ensure_ascii=False))
        return
    typer.echo(f"{rules.game}, seed {seed!r}, deal {number}, dealer seat {dealer}")
    for seat, hand in enumerate(out["hands"]):
        typer.echo(f"  seat {seat}: {' '.join(hand)}")
    for key in ("widow", "monte", "stock"):
        if key in out:
            typer.echo(f"  {key}:  {' '.join(out[key])}")
    if "trump" in out:
        typer.echo(f"  trump:  {out['trump']} (the dealer's last card, shown)")
