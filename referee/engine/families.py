"""The game families, each declared once, and looked up here by everything else.

A family is the code that plays a game: its seats and sides, its hand, how its deals are
dealt from a seed, its game class and the codec of its action ids. A preset
(``referee.engine.rules``) names a family in ``Rules.game``; the rules' seat facts, the
engine, the protocol, the records, conformance and ``tavolo deal`` all ask
:func:`family`. Adding a game family is one :class:`Family` in :data:`FAMILIES`, and the
family's own files (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from referee.engine.action_codec import CALABRESELLA_CODEC, TRESSETTE_CODEC, ActionCodec
from referee.engine.calabresella import CalabresellaDeal, deal_calabresella
from referee.engine.calabresella_game import CalabresellaGame
from referee.engine.deal_book import DealBook
from referee.engine.deals import Deal, deal_cards
from referee.engine.game_base import GameBase
from referee.engine.tressette import TressetteDeal
from referee.engine.tressette_a_due import TressetteADueDeal
from referee.engine.tressette_a_tre import TressetteATreDeal
from referee.engine.tressette_game import TressetteGame

if TYPE_CHECKING:
    from referee.engine.rules import Rules

TRESSETTE_KINDS = ("play", "declare", "end-declarations", "call-out")
"""What a Tressette deal asks for (declarations and call-outs where the rules have them)."""
AnyGame = GameBase[Any, Any]
"""A game of any family: the state API, the record and faults are the same for all."""
DealSource = Callable[[int, int], Deal]
"""``(deal number, dealer) -> Deal``: given deals in place of the seeded ones."""


def deal_in_packets(rules: Rules, seed: str, number: int, dealer: int) -> Deal:
    """The Tressette families' deal: packets from the seat after the dealer, to every seat."""
    return deal_cards(rules.game, seed, number, dealer, rules.players)


@dataclass(frozen=True)
class Family:
    """Everything that makes a game family what it is."""

    name: str
    """``Rules.game``; the deal generator hashes it, so it never changes."""
    players: Callable[[Rules], int]
    """Seats at the table, for these rules."""
    partnerships: bool
    """Whether seats play in two sides of two (0+2, 1+3); else each seat is its own side."""
    lower_wins: bool
    """Whether points count against (ciapanò): the lowest total wins."""
    hand_size: int
    """Cards dealt to each seat that plays a deal."""
    codec: ActionCodec
    """How its action ids are read and written."""
    kinds: tuple[str, ...]
    """The kinds of action its deals ask for, in the order they first come."""
    deal_class: type[Any]
    """One deal: ``deal_class(rules, hands, dealer, ...)``."""
    deal: Callable[[Rules, str, int, int], Deal]
    """``(rules, seed, number, dealer)``: deal ``number``'s cards by seat, as the game deals."""
    game: Callable[..., AnyGame]
    """The game class: ``game(rules, seed, deals=, seats=, record=, deal_source=, book=,
    book_start=)``."""
    leftover: str = ""
    """What the cards left undealt are called: tressette a tre's ``widow``, the ``monte``,
    the ``stock`` of tressette a due; empty where every card is dealt."""
    check: Callable[[Rules], str | None] | None = None
    """What the family's own rules refuse of the knobs, as an error text; None: all well."""


def _no_briscola(rules: Rules) -> str | None:
    if rules.briscola:
        return "knob 'briscola' needs the four-player game (the dealer's last card)"
    return None


def _calabresella_knobs(rules: Rules) -> str | None:
    if rules.cappotto == "fixed":
        return (
            "knob 'cappotto' in calabresella is none or double (winning every trick "
            "doubles the contract)"
        )
    return _no_briscola(rules)


def _tressette_family(
    name: str, seats: int, deal_class: type[Any], *, partners: bool = False, hand: int = 10,
    lower_wins: bool = False, briscola: bool = False, leftover: str = "",
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
        game=TressetteGame,
        check=None if briscola else _no_briscola,
        leftover=leftover,
    )


FAMILIES: Mapping[str, Family] = {
    f.name: f
    for f in (
        _tressette_family("tressette", 4, TressetteDeal, partners=True, briscola=True),
        _tressette_family("tressette-a-tre", 3, TressetteATreDeal, hand=12, leftover="widow"),
        _tressette_family("ciapano", 4, TressetteDeal, lower_wins=True),
        _tressette_family("tressette-a-due", 2, TressetteADueDeal, leftover="stock"),
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
            game=CalabresellaGame,
            leftover="monte",
            check=_calabresella_knobs,
        ),
    )
}
"""Every family, by name."""


def family(name: str) -> Family:
    """The family named ``name``; KeyError for no such family."""
    return FAMILIES[name]


def new_game(
    rules: Rules,
    seed: str,
    *,
    deals: int | None = None,
    seats: Sequence[str] | None = None,
    record: bool = False,
    deal_source: DealSource | None = None,
    book: DealBook | None = None,
    book_start: int = 0,
) -> AnyGame:
    """A new game of ``rules.game`` (see :class:`~referee.engine.game_base.GameBase`)."""
    return family(rules.game).game(
        rules,
        seed,
        deals=deals,
        seats=seats,
        record=record,
        deal_source=deal_source,
        book=book,
        book_start=book_start,
    )
