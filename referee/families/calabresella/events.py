"""Calabresella's own events: its deal (with the monte), the auction's bids and contract,
the call, the face-down give and discard, the split of the monte, a redeal, and the
deal's score and payouts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from referee.engine.events import Cards, DealOver, Dealt, Event, Scored


@dataclass(frozen=True, slots=True)
class CalabresellaDealt(Dealt):
    """A Calabresella deal: three hands and the monte."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"book_line"})
    monte: Cards
    book_line: int | None = None
    """The deal book's line this deal came from."""


@dataclass(frozen=True, slots=True)
class Bid(Event):
    """``seat`` bid ``bid``: ``pass`` or a contract's name."""

    TYPE: ClassVar[str] = "bid"
    seat: int
    bid: str


@dataclass(frozen=True, slots=True)
class ContractMade(Event):
    """The auction is over: ``soloist`` plays ``contract``."""

    TYPE: ClassVar[str] = "contract"
    soloist: int
    contract: str


@dataclass(frozen=True, slots=True)
class Called(Event):
    """The soloist called ``card``; ``holder`` has it (None: it is in the monte)."""

    TYPE: ClassVar[str] = "call"
    seat: int
    card: str
    holder: int | None


@dataclass(frozen=True, slots=True)
class Given(Event):
    """``seat`` gave the soloist ``card`` for the called card (face down)."""

    TYPE: ClassVar[str] = "give"
    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class Discarded(Event):
    """The soloist set ``card`` aside (face down)."""

    TYPE: ClassVar[str] = "discard"
    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class Split(Event):
    """The soloist took ``take`` from the monte."""

    TYPE: ClassVar[str] = "split"
    seat: int
    take: Cards


@dataclass(frozen=True, slots=True)
class Redealt(DealOver):
    """Everyone passed: the deal is dealt again, by the same dealer."""

    TYPE: ClassVar[str] = "redeal"


@dataclass(frozen=True, slots=True)
class CalabresellaScored(Scored):
    """A Calabresella deal's score: the contract's outcome and each seat's payout."""

    contract: str
    soloist: int
    soloist_points: int
    success: bool
    cappotto: bool
    stramazzo: bool
    value: int
    thirds: tuple[int, ...]
    last_trick: int
    set_aside: Cards
    points: tuple[int, ...]
    """By seat (each seat is its own side)."""
    totals: tuple[int, ...]
