"""The Tressette families: tressette (four seats in two partnerships), tressette a tre,
ciapanò and tressette a due; their deals, game, action codec, presets and adapters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.engine.deals import Deal, deal_cards, deal_deck
from referee.engine.registry import Family, register
from referee.engine.rules import Rules
from referee.families.tressette.a_due_deal import TressetteADueDeal
from referee.families.tressette.a_tre_deal import TressetteATreDeal
from referee.families.tressette.codec import TRESSETTE_CODEC
from referee.families.tressette.deal import TressetteDeal, rules_tables
from referee.families.tressette.game import TressetteGame

ORDER = 0
"""First: ``tressette`` is the default game."""
TRESSETTE_KINDS = ("play", "declare", "end-declarations", "call-out")
"""What a Tressette deal asks for (declarations and call-outs where the rules have them)."""


def deal_in_packets(rules: Rules, seed: str, number: int, dealer: int) -> Deal:
    """The Tressette families' deal: packets from the seat after the dealer, to every seat."""
    return deal_cards(rules.game, seed, number, dealer, rules.players)


def deck_in_packets(rules: Rules, deck: Sequence[int], number: int, dealer: int) -> Deal:
    """:func:`deal_in_packets` from a given order of the deck."""
    return deal_deck(rules.game, deck, number, dealer, rules.players)


def no_briscola(rules: Rules) -> str | None:
    """Refuses ``briscola`` outside the four-player game."""
    if rules.briscola:
        return "knob 'briscola' needs the four-player game (the dealer's last card)"
    return None


def _tressette_family(
    name: str, seats: int, deal_class: type[Any], presets: dict[str, Rules], *,
    partners: bool = False, hand: int = 10, lower_wins: bool = False, briscola: bool = False,
    leftover: str = "",
) -> Family:  # fmt: skip
    """A family of Tressette's: its deal, game, codec and dealing, with its own seats."""
    return Family(
        name,
        players=lambda rules: seats,
        partnerships=partners,
        lower_wins=lower_wins,
        hand_size=hand,
        codec=TRESSETTE_CODEC,
        kinds=TRESSETTE_KINDS,
        deal_class=deal_class,
        deal=deal_in_packets,
        deal_deck=deck_in_packets,
        game=TressetteGame,
        check=None if briscola else no_briscola,
        leftover=leftover,
        presets=presets,
        warm_up=rules_tables,
        package=__name__,
    )


def register_families() -> None:
    """Register the four Tressette families and their presets."""
    register(
        _tressette_family(
            "tressette", 4, TressetteDeal, partners=True, briscola=True,
            presets={
                "tressette": Rules(),
                "tressette-muto": Rules(signals="muto"),
                "treseta": Rules(target=41, signals="leader"),
                "tressette-briscola": Rules(briscola=True),
                "tressette-study": Rules(
                    target=21, signals="muto", auto_declare=True, cappotto="none",
                    first_lead="four_of_denari",
                ),
            },
        ),
        _tressette_family(
            "tressette-a-tre", 3, TressetteATreDeal, hand=12, leftover="widow",
            presets={"tressette-a-tre": Rules(game="tressette-a-tre", target=21, signals="muto")},
        ),
        _tressette_family(
            "ciapano", 4, TressetteDeal, lower_wins=True,
            presets={
                "ciapano": Rules(
                    game="ciapano", target=21, signals="muto", declarations=False,
                    cappotto="none",
                ),
            },
        ),
        _tressette_family(
            "tressette-a-due", 2, TressetteADueDeal, leftover="stock",
            presets={"tressette-a-due": Rules(game="tressette-a-due", target=21, signals="muto")},
        ),
    )  # fmt: skip
