"""The Calabresella auction: contracts, bid action ids, and who wins the right to play alone.

==========  ============================  ===================
ids         action                        text
==========  ============================  ===================
400         pass (``BID_PASS``)           ``pass``
401..405    bid a contract                ``bid chiamo`` …
==========  ============================  ===================

A bid is ``BID_PASS + contract``; the contracts are worth 1, 2, 4, 8 and 16 game points.

How the auction runs (seed 004: "cada jugador puede pasar o declarar uno de los cinco
contratos en orden ascendente … cada jugador tiene una oportunidad de superar la
declaración"). Turns go counter-clockwise (ascending seats) from the eldest, over the three
active seats; on each turn a player passes or bids a contract strictly higher than the
highest bid so far. Knob ``auction``:

- ``once`` (the default): each player speaks exactly once, so the auction is three turns
  long; the highest contract wins, and with none the same dealer redeals.
- ``open`` (the common published rule, and this engine's before 2026-12-01): a player who
  passes is out for good and is skipped from then on; a player who bid and was overbid
  speaks again when the turn comes round. It ends when all three have passed (a redeal), or
  when the two others have passed after a bid (the highest bidder wins without speaking
  again).

Either way solissimo scegliete ends the auction at once, since nothing can overbid it.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum, StrEnum
from typing import Self

from referee.engine.cloning import clone_state
from referee.engine.errors import IllegalActionError, Reason

Action = int


class Contract(IntEnum):
    """A contract, weakest first; ``BID_PASS + contract`` is the bid action."""

    CHIAMO = 1
    """Call a card one lacks, swap it, then take the monte and discard 4."""
    SOLO = 2
    """Take the monte and discard 4."""
    SOLISSIMO = 3
    """Play the 12 dealt cards; the monte stays aside."""
    DIVIDETE = 4
    """Solissimo dividete: each defender takes 2 monte cards and discards 2."""
    SCEGLIETE = 5
    """Solissimo scegliete: the monte is shown, the defenders split it and discard as many."""

    @property
    def game_points(self) -> int:
        """What the contract is worth: 1, 2, 4, 8 or 16."""
        return 1 << (self - 1)

    @property
    def label(self) -> str:
        """The contract's name in action text, e.g. ``dividete``."""
        return CONTRACT_NAMES[self]


CONTRACT_NAMES = {
    Contract.CHIAMO: "chiamo",
    Contract.SOLO: "solo",
    Contract.SOLISSIMO: "solissimo",
    Contract.DIVIDETE: "dividete",
    Contract.SCEGLIETE: "scegliete",
}

BID_PASS: Action = 400
"""Pass; the bid of contract ``c`` is ``BID_PASS + c`` (401 chiamo … 405 scegliete)."""
BID_CHIAMO, BID_SOLO, BID_SOLISSIMO, BID_DIVIDETE, BID_SCEGLIETE = (BID_PASS + c for c in Contract)


def bid_action(contract: Contract | None) -> Action:
    """The bid of ``contract``, or the pass for None."""
    return BID_PASS if contract is None else BID_PASS + contract


def is_bid(action: Action) -> bool:
    """Whether the action is a pass or a bid."""
    return BID_PASS <= action <= BID_SCEGLIETE


def bid_name(action: Action) -> str:
    """Text of a bid: ``pass`` or ``bid solo``."""
    if action == BID_PASS:
        return "pass"
    return "bid " + CONTRACT_NAMES[Contract(action - BID_PASS)]


class CalabresellaReason(StrEnum):
    """Exactly which Calabresella rule refused an action (the ``detail`` of the error)."""

    GAME_OVER = "game_over"
    UNKNOWN_ACTION = "unknown_action"
    """An id that names no Calabresella action."""
    WRONG_PHASE = "wrong_phase"
    """A real action of another step, e.g. a play during the auction."""
    BID_TOO_LOW = "bid_too_low"
    """A bid not higher than the highest bid so far."""
    CALLED_CARD_HELD = "called_card_held"
    """Chiamo: the soloist names a card he holds."""
    GIVE_CALLED_CARD = "give_called_card"
    """Chiamo: the soloist gives back the card he just called."""
    CARD_NOT_IN_HAND = "card_not_in_hand"
    MUST_FOLLOW_SUIT = "must_follow_suit"


_GENERAL = {
    CalabresellaReason.GAME_OVER: Reason.GAME_OVER,
    CalabresellaReason.CARD_NOT_IN_HAND: Reason.CARD_NOT_IN_HAND,
    CalabresellaReason.MUST_FOLLOW_SUIT: Reason.MUST_FOLLOW_SUIT,
}


class CalabresellaError(IllegalActionError):
    """An illegal Calabresella action.

    ``reason`` is the nearest general :class:`Reason` (``unknown_action`` when none fits);
    ``detail`` names the Calabresella rule.
    """

    def __init__(self, detail: CalabresellaReason, message: str) -> None:
        super().__init__(_GENERAL.get(detail, Reason.UNKNOWN_ACTION), message)
        self.detail = detail


class Auction:
    """The auction of one deal among three seats; see the module docstring for the rules."""

    __slots__ = ("_best", "_best_seat", "_over", "_passed", "_turn", "bids", "once", "order")

    def clone(self) -> Self:
        """A copy that bids on without changing this auction."""
        return clone_state(self)

    def __init__(self, order: Sequence[int], *, once: bool = True) -> None:
        """``order``: the three active seats, the eldest first; ``once``: each speaks once
        (knob ``auction = once``), else the auction stays open until two have passed."""
        if len(order) != 3 or len(set(order)) != 3:
            raise ValueError(f"an auction needs three distinct seats, got {list(order)}")
        self.order = tuple(order)
        self.once = once
        self.bids: list[tuple[int, Action]] = []
        """Every pass and bid so far: (seat, action)."""
        self._passed: set[int] = set()
        self._best: Contract | None = None
        self._best_seat = -1
        self._turn = 0
        self._over = False

    @property
    def is_over(self) -> bool:
        """Whether the auction has ended."""
        return self._over

    @property
    def highest(self) -> Contract | None:
        """The highest contract bid so far."""
        return self._best

    @property
    def winner(self) -> tuple[int, Contract] | None:
        """(soloist, contract) once the auction is over; None before, or when all passed."""
        if not self._over or self._best is None:
            return None
        return self._best_seat, self._best

    def current_player(self) -> int | None:
        """Seat to speak, or None once the auction is over."""
        return None if self._over else self.order[self._turn]

    def legal_bids(self) -> tuple[Action, ...]:
        """Pass, then every contract above the highest bid; empty once over."""
        if self._over:
            return ()
        low = 1 if self._best is None else self._best + 1
        return (BID_PASS, *(BID_PASS + c for c in range(low, len(Contract) + 1)))

    def refusal(self, bid: Action) -> CalabresellaError | None:
        """Why the seat to speak may not make ``bid``, or None if it may."""
        if self._over:
            return CalabresellaError(CalabresellaReason.GAME_OVER, "the auction is over")
        if bid in self.legal_bids():
            return None
        seat = self.order[self._turn]
        if not is_bid(bid):
            return CalabresellaError(
                CalabresellaReason.UNKNOWN_ACTION,
                f"seat {seat}: action {bid} is not a bid; bids are 400 (pass) to 405",
            )
        assert self._best is not None
        return CalabresellaError(
            CalabresellaReason.BID_TOO_LOW,
            f"seat {seat} bids {CONTRACT_NAMES[Contract(bid - BID_PASS)]}: "
            f"it must be higher than {CONTRACT_NAMES[self._best]}, bid by seat {self._best_seat}",
        )

    def apply(self, bid: Action) -> None:
        """Record the bid of the seat to speak; raise :class:`CalabresellaError` if illegal."""
        error = self.refusal(bid)
        if error is not None:
            raise error
        seat = self.order[self._turn]
        self.bids.append((seat, bid))
        if bid == BID_PASS:
            self._passed.add(seat)
        else:
            self._best = Contract(bid - BID_PASS)
            self._best_seat = seat
        # With a bid standing, two passes leave its bidder alone; with none, it takes three.
        needed = 3 if self._best is None else 2
        if (
            (self.once and len(self.bids) == 3)
            or len(self._passed) == needed
            or self._best is Contract.SCEGLIETE
        ):
            self._over = True
        else:
            self._turn = (self._turn + 1) % 3
            while self.order[self._turn] in self._passed:
                self._turn = (self._turn + 1) % 3
