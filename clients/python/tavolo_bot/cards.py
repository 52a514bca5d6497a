"""Card text helpers: ranks, suits, strength, points and who beats whom.

A card is text, rank then suit: ``"3D"``, ``"QB"``, ``"AS"``. Ranks, strongest first, are
``3 2 A K Q J 7 6 5 4`` (Q the cavallo, J the fante); suits are ``D C S B`` (denari, coppe,
spade, bastoni). There are no trumps: only a card of the suit led can win a trick.
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "32AKQJ7654"
"""Rank letters, strongest first."""

SUITS = "DCSB"
"""Suit letters: denari, coppe, spade, bastoni."""

CARDS: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)
"""The 40 cards, suit by suit, strongest first within a suit."""

SIGNAL_NAMES: tuple[str, ...] = (
    "",
    "busso",
    "volo",
    "striscio",
    "ribusso",
    "striscio-lungo",
    "striscio-corto",
)
"""Signal names by ``Signal`` enum value, as action texts write them; ``""`` for no signal."""

_POINTS_BY_RANK = (1, 1, 3, 1, 1, 1, 0, 0, 0, 0)
_RANK_OF = {card: RANKS.index(card[0]) for card in CARDS}


def _canonical(card: str) -> str:
    """The card as :data:`CARDS` spells it; raises ``ValueError`` for text that is no card."""
    if card in _RANK_OF:
        return card
    text = card.strip().upper() if isinstance(card, str) else ""
    if text not in _RANK_OF:
        raise ValueError(f"bad card {card!r}: write rank ({RANKS}) then suit ({SUITS}), e.g. 3D")
    return text


def is_card(text: str) -> bool:
    """Whether ``text`` names a card (case and surrounding spaces ignored)."""
    try:
        _canonical(text)
    except ValueError:
        return False
    return True


def rank_of(card: str) -> int:
    """Rank index, 0 for the 3 (strongest) to 9 for the 4 (weakest)."""
    return _RANK_OF[_canonical(card)]


def suit_of(card: str) -> str:
    """Suit letter: ``suit_of("QB") == "B"``."""
    return _canonical(card)[1]


def strength(card: str) -> int:
    """9 for the 3 down to 0 for the 4: higher is stronger, so ``max(cards, key=strength)``."""
    return 9 - rank_of(card)


def points_in_thirds(card: str) -> int:
    """Card value in thirds of a point: the ace 3; 3, 2, K, Q, J 1; 7, 6, 5, 4 nothing."""
    return _POINTS_BY_RANK[rank_of(card)]


def beats(a: str, b: str, led_suit: str) -> bool:
    """Whether ``a`` beats ``b`` in a trick led in ``led_suit``."""
    if suit_of(a) != led_suit:
        return False
    return suit_of(b) != led_suit or rank_of(a) < rank_of(b)


def winning_card(cards: Iterable[str], led_suit: str | None = None) -> str | None:
    """The card that wins among ``cards`` (led suit: the first card's unless given); None if none.

    With an explicit ``led_suit`` and no card of that suit, no card wins and the result is None.
    """
    best: str | None = None
    for card in cards:
        if led_suit is None:
            led_suit = suit_of(card)
        if suit_of(card) == led_suit and (best is None or rank_of(card) < rank_of(best)):
            best = card
    return best


def sort_cards(cards: Iterable[str]) -> list[str]:
    """Cards in deck order: by suit (D C S B), strongest first within a suit."""
    return sorted(cards, key=lambda c: (SUITS.index(suit_of(c)), rank_of(c)))


def signal_name(signal: int) -> str:
    """Name of a ``Signal`` enum value, e.g. ``"volo"``; ``""`` for no signal."""
    return SIGNAL_NAMES[signal] if 0 <= signal < len(SIGNAL_NAMES) else ""
