"""The rules every family's tricks share, written once: who takes a trick, following suit,
and card points floored from thirds.

Tressette's deal inlines the first two on its fast path (``tressette.py``, checked against
these by tests/test_engine_api.py); everything else calls them.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.engine.cards import SUIT_NAMES


def trick_winner(plays: Sequence[tuple[int, int]], trump_suit: int | None = None) -> int:
    """The seat that takes a trick of ``(seat, card)`` plays, in playing order: the highest
    trump played, else the highest card of the suit led. Within a suit a lower card id is
    a higher rank; other suits cannot win."""
    led = plays[0][1] // 10
    trumps = [(c, s) for s, c in plays if trump_suit is not None and c // 10 == trump_suit]
    return min(trumps or [(c, s) for s, c in plays if c // 10 == led])[1]


def follow_suit_refusal(what: str, led_suit: int) -> str:
    """Why a card of another suit is refused while the hand holds the suit led."""
    return f"{what}: must follow suit, {SUIT_NAMES[led_suit]} was led and the hand holds some"


def floored_points(thirds: int) -> int:
    """Whole points of ``thirds`` of a point: what is left over counts for nothing."""
    return thirds // 3
