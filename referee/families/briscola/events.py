"""Briscola's own events: its deal (with the stock and the trump) and the deal's score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from referee.engine.events import Cards, Dealt, Scored


@dataclass(frozen=True, slots=True)
class BriscolaDealt(Dealt):
    """A Briscola deal: the hands, the stock in drawing order, and the trump card."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"book_line"})
    book_line: int | None
    """The deal book's line this deal came from."""
    stock: Cards
    trump: str


@dataclass(frozen=True, slots=True)
class BriscolaScored(Scored):
    """A Briscola deal's score: card points and the deal's points, by side."""

    card_points: tuple[int, ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]
