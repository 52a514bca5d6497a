"""The Tressette families' own events: the deal (with a stock, a widow or a trump where the
variant has one), declarations, the end of declaring, a call-out, and the deal's score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from referee.engine.events import Cards, Dealt, Event, Scored


@dataclass(frozen=True, slots=True)
class TressetteDealt(Dealt):
    """A deal of a Tressette family: tressette a due has a stock, a tre a widow, and the
    briscola variant a trump (the dealer's last card)."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"book_line", "stock", "widow", "trump"})
    book_line: int | None = None
    """The deal book's line this deal came from."""
    stock: Cards | None = None
    widow: Cards | None = None
    trump: str | None = None


@dataclass(frozen=True, slots=True)
class Declared(Event):
    """``seat`` declared ``declaration`` (an accuso), showing ``cards``, worth ``points``."""

    TYPE: ClassVar[str] = "declare"
    seat: int
    declaration: str
    cards: Cards
    points: int


@dataclass(frozen=True, slots=True)
class DeclarationsEnded(Event):
    """``seat`` has nothing more to declare."""

    TYPE: ClassVar[str] = "end-declarations"
    seat: int


@dataclass(frozen=True, slots=True)
class CalledOut(Event):
    """``seat`` claimed its side had reached the target with ``claimed`` points."""

    TYPE: ClassVar[str] = "call-out"
    seat: int
    claimed: int
    correct: bool


@dataclass(frozen=True, slots=True)
class TressetteScored(Scored):
    """A Tressette deal's score, by side."""

    last_trick: int
    """The side that won the last trick."""
    thirds: tuple[int, ...]
    card_points: tuple[int, ...]
    declarations: tuple[int, ...]
    cappotto: int | None
    """The side that won every trick, if one did."""
    points: tuple[int, ...]
    totals: tuple[int, ...]
