"""The 40-card Italian deck: integer card ids, text notation and bitmask helpers.

A card id is ``suit * 10 + rank``. Ranks are indexed from the strongest:
``3 2 A K Q J 7 6 5 4`` are ranks 0..9, so a lower rank index beats a higher one.
Suits are ``D C S B`` (denari, coppe, spade, bastoni), indexed 0..3.
So ``3D`` is 0, ``4D`` is 9, ``3C`` is 10 and ``4B`` is 39.

A set of cards is an ``int`` bitmask with bit ``card`` set for each card held.
"""

from __future__ import annotations

from collections.abc import Iterable

Card = int
"""A card id, 0..39."""

CardSet = int
"""A set of cards as a 40-bit mask."""

RANK_SYMBOLS = "32AKQJ7654"
"""Rank letters, strongest first; Q is the cavallo, J the fante, K the re."""

SUIT_SYMBOLS = "DCSB"
"""Suit letters: denari, coppe, spade, bastoni."""

SUIT_NAMES = ("denari", "coppe", "spade", "bastoni")

NUM_CARDS = 40
RANKS_PER_SUIT = 10
FULL_DECK: CardSet = (1 << NUM_CARDS) - 1

RANK_3, RANK_2, RANK_A = 0, 1, 2
"""The three honours (pezzi) by rank index."""

SUIT_MASKS: tuple[CardSet, ...] = tuple(((1 << 10) - 1) << (10 * s) for s in range(4))
"""Bitmask of every card of each suit."""

CARD_NAMES: tuple[str, ...] = tuple(
    RANK_SYMBOLS[c % 10] + SUIT_SYMBOLS[c // 10] for c in range(NUM_CARDS)
)
"""``CARD_NAMES[card]`` is the card's text, e.g. ``CARD_NAMES[0] == "3D"``."""

_CARD_IDS = {name: card for card, name in enumerate(CARD_NAMES)}


class CardError(ValueError):
    """Raised for card text that names no card."""


def card_suit(card: Card) -> int:
    """Suit index of a card."""
    return card // 10


def card_rank(card: Card) -> int:
    """Rank index of a card, 0 (the 3) to 9 (the 4)."""
    return card % 10


def make_card(rank: int, suit: int) -> Card:
    """The card of a rank index and a suit index."""
    return suit * 10 + rank


def card_name(card: Card) -> str:
    """Text of a card, rank then suit: ``card_name(2) == "AD"``."""
    if not 0 <= card < NUM_CARDS:
        raise CardError(f"card id {card} is not in 0..39")
    return CARD_NAMES[card]


def parse_card(text: str) -> Card:
    """Card id of a text such as ``3D`` or ``qb``; raises :class:`CardError` otherwise."""
    if not isinstance(text, str):
        raise CardError(f"card must be text like '3D', got {text!r}")
    card = _CARD_IDS.get(text.strip().upper())
    if card is None:
        raise CardError(
            f"bad card {text!r}: write rank then suit, rank one of {' '.join(RANK_SYMBOLS)}, "
            f"suit one of {' '.join(SUIT_SYMBOLS)} (e.g. 3D, QB, AS)"
        )
    return card


def parse_cards(texts: Iterable[str]) -> list[Card]:
    """Card ids of several card texts, in order."""
    return [parse_card(t) for t in texts]


def cards_of(mask: CardSet) -> list[Card]:
    """The cards in a set, in id order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(cards: Iterable[Card]) -> CardSet:
    """The set holding the given cards."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def names(cards: Iterable[Card]) -> list[str]:
    """Text of several cards, in the order given."""
    return [CARD_NAMES[c] for c in cards]
