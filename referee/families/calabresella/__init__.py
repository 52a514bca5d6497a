"""Calabresella: three players (or four, the dealer sitting out), an auction, one soloist
against two; its deal, auction, game, action codec, presets and adapters."""

from __future__ import annotations

from referee.engine.registry import Family, register
from referee.engine.rules import Rules
from referee.families.calabresella.codec import CALABRESELLA_CODEC
from referee.families.calabresella.deal import (
    CalabresellaDeal,
    deal_calabresella,
    deal_calabresella_deck,
)
from referee.families.calabresella.game import CalabresellaGame

ORDER = 1


def _knobs(rules: Rules) -> str | None:
    if rules.cappotto == "fixed":
        return (
            "knob 'cappotto' in calabresella is none or double (winning every trick "
            "doubles the contract)"
        )
    if rules.briscola:
        return "knob 'briscola' needs the four-player game (the dealer's last card)"
    return None


def register_families() -> None:
    """Register Calabresella and its preset."""
    register(
        Family(
            "calabresella",
            players=lambda rules: rules.table_seats,
            partnerships=False,
            lower_wins=False,
            hand_size=12,
            codec=CALABRESELLA_CODEC,
            kinds=("bid", "call", "give", "discard", "split", "play"),
            deal_class=CalabresellaDeal,
            deal=deal_calabresella,
            deal_deck=deal_calabresella_deck,
            game=CalabresellaGame,
            leftover="monte",
            check=_knobs,
            package=__name__,
            presets={
                "calabresella": Rules(
                    game="calabresella", target=21, signals="muto", declarations=False,
                    cappotto="double",
                ),
            },
        )
    )  # fmt: skip
