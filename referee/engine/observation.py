"""What one seat may know of a trick-taking deal, in the families that play cards and
tricks alone (the Tressette families, Briscola): one type that the protocol shows alike."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from referee.engine.codec import Action


class Phase(IntEnum):
    """Where a deal stands."""

    DECLARE = 0
    """Tressette's declaration round of ``declare_before_first_card``."""
    PLAY = 1
    """Tricks are being played."""
    DONE = 2
    """All tricks played, or a player called out."""


@dataclass(frozen=True)
class Observation:
    """Exactly what one seat may know of a deal in progress."""

    seat: int
    dealer: int
    phase: Phase
    hand: tuple[int, ...]
    """The seat's own unplayed cards."""
    current_player: int | None
    legal_actions: tuple[Action, ...]
    """The seat's legal actions when it is to act, else empty."""
    trick: tuple[tuple[int, Action], ...]
    """The current trick so far: (seat, play action), signals included."""
    tricks: tuple[tuple[tuple[tuple[int, Action], ...], int], ...]
    """Completed tricks: their plays and the winning seat."""
    declarations: tuple[tuple[int, int], ...]
    """Public declarations: (seat, declaration id); none in a family without them."""
    captured: tuple[int, ...]
    """Card points each side has captured so far: thirds of a point in Tressette."""
    totals: tuple[int, ...]
    """Game points of each side before this deal."""
    trump: int | None = None
    """The face-up trump card (tressette con la briscola, Briscola), or None."""
    draws: tuple[tuple[int, int], ...] = ()
    """The cards drawn from the stock so far that this seat saw, (seat, card): every one in
    tressette a due; in Briscola its own and the face-up trump."""
    stock_left: int = 0
    """Cards still in the stock (tressette a due, Briscola)."""
