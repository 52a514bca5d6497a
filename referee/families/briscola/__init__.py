"""Briscola: two seats, or four in two partnerships; three cards in hand, a stock, a trump
suit turned up, no obligation to follow suit, and 120 card points a deal.
Its deal, game, action codec, knobs, presets and adapters (docs/rules.md, "Briscola")."""

from __future__ import annotations

from referee.engine.registry import Family, register
from referee.engine.rules import Rules
from referee.families.briscola.codec import BRISCOLA_CODEC
from referee.families.briscola.deal import (
    HAND_SIZE,
    BriscolaDeal,
    deal_briscola,
    deal_briscola_deck,
)
from referee.families.briscola.game import BriscolaGame
from referee.families.briscola.knobs import CARD_VALUES, TARGET, check_knobs

ORDER = 2


def _family(name: str, seats: int) -> Family:
    return Family(
        name,
        players=lambda rules: seats,
        partnerships=seats == 4,
        lower_wins=False,
        hand_size=HAND_SIZE,
        codec=BRISCOLA_CODEC,
        kinds=("play",),
        deal_class=BriscolaDeal,
        deal=deal_briscola,
        deal_deck=deal_briscola_deck,
        game=BriscolaGame,
        leftover="stock",
        trump_under_stock=True,
        check=check_knobs,
        presets={
            name: Rules(
                game=name, target=TARGET, card_values=CARD_VALUES, signals="muto",
                declarations=False, cappotto="none",
            )
        },
        package=__name__,
    )  # fmt: skip


def register_families() -> None:
    """Register Briscola for two seats and for four in partnerships, a preset each."""
    register(_family("briscola", 2), _family("briscola-a-quattro", 4))
