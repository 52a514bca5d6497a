"""Action ids, one codec per game family: take an id apart, put it together, name it, parse it.

An action is an int. What it means depends on the family, and every place that shows or
reads actions asks the family's codec (``referee.engine.families``): the engine's texts,
the protocol's ``Action`` messages, the records' action lines, the conformance checks.

==========  ============================================  =========================
family      ids                                           text
==========  ============================================  =========================
Tressette   0..279 a card with a signal (``signal*40+c``)  ``3D``, ``AS volo``
            300..319 a declaration (``300 + d``)           ``declare napoli-D``
            320 end the declarations, 321 call out         ``end-declarations``
Calabres.   0..39 a card                                   ``3D``
            400..405 pass, or a bid                        ``pass``, ``bid solo``
            440.. call, 480.. give, 520.. discard a card   ``call AD``
            560..575 split the monte (``560 + mask``)      ``split 0101``
==========  ============================================  =========================
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Protocol

from referee.engine.actions import (
    CALL_OUT,
    DECLARE_BASE,
    END_DECLARATIONS,
    NUM_PLAY_ACTIONS,
    SIGNAL_NAMES,
    Action,
    ActionError,
    action_name,
    parse_action,
)
from referee.engine.calabresella import CALL_BASE, DISCARD_BASE, GIVE_BASE, SPLIT_BASE
from referee.engine.calabresella import action_name as calabresella_action_name
from referee.engine.calabresella_auction import BID_PASS, BID_SCEGLIETE, CONTRACT_NAMES
from referee.engine.cards import NUM_CARDS, CardError, parse_card
from referee.engine.declarations import DECLARATION_NAMES

KINDS = (
    "play", "declare", "end-declarations", "call-out", "bid", "call", "give", "discard", "split",
)  # fmt: skip
"""Every kind of action, as records name their lines and the protocol its ``ActionKind``."""


@dataclass(frozen=True)
class ActionParts:
    """An action id taken apart: what the protocol and the records show of it."""

    kind: str
    """One of :data:`KINDS`."""
    card: int | None = None
    """The card played, called, given or discarded."""
    signal: int = 0
    """A play's signal (index in ``SIGNAL_NAMES``; 0 for none)."""
    declaration: int | None = None
    bid: str | None = None
    """``pass`` or the contract's name (``solo``)."""
    mask: int | None = None
    """A split: bit ``i`` takes the ``i``-th monte card in ascending id order."""


class ActionCodec(Hashable, Protocol):
    """The four ways a family's action ids are read and written."""

    def decode(self, action: Action) -> ActionParts:
        """The parts of ``action``; ActionError for an id of no action."""
        ...

    def encode(self, parts: ActionParts) -> Action:
        """The id of ``parts``; ActionError if the family has no such action."""
        ...

    def name(self, action: Action) -> str:
        """The text of ``action``, e.g. ``AS volo`` or ``call AD``."""
        ...

    def parse(self, text: str) -> Action:
        """The action a text names, written as :meth:`name` writes it."""
        ...


def _card_of(text: str) -> int:
    try:
        return parse_card(text)
    except CardError as exc:
        raise ActionError(str(exc)) from None


def _need_card(parts: ActionParts) -> int:
    if parts.card is None or not 0 <= parts.card < NUM_CARDS:
        raise ActionError(f"a {parts.kind} action needs a card, got {parts.card!r}")
    return parts.card


_PLAY_PARTS = tuple(
    ActionParts("play", card=a % NUM_CARDS, signal=a // NUM_CARDS) for a in range(NUM_PLAY_ACTIONS)
)
"""Every play's parts, made once: the record takes apart every action played."""


class TressetteCodec:
    """Tressette's ids: cards with signals, declarations, the end of declarations, call-out."""

    def decode(self, action: Action) -> ActionParts:
        if 0 <= action < NUM_PLAY_ACTIONS:
            return _PLAY_PARTS[action]
        if DECLARE_BASE <= action < DECLARE_BASE + len(DECLARATION_NAMES):
            return ActionParts("declare", declaration=action - DECLARE_BASE)
        if action == END_DECLARATIONS:
            return ActionParts("end-declarations")
        if action == CALL_OUT:
            return ActionParts("call-out")
        raise ActionError(f"action id {action} names no action")

    def encode(self, parts: ActionParts) -> Action:
        if parts.kind == "play":
            if not 0 <= parts.signal < len(SIGNAL_NAMES):
                raise ActionError(f"signal {parts.signal} names no signal")
            return parts.signal * NUM_CARDS + _need_card(parts)
        if parts.kind == "declare":
            if parts.declaration is None or not 0 <= parts.declaration < len(DECLARATION_NAMES):
                raise ActionError(f"declaration {parts.declaration!r} names no combination")
            return DECLARE_BASE + parts.declaration
        if parts.kind == "end-declarations":
            return END_DECLARATIONS
        if parts.kind == "call-out":
            return CALL_OUT
        raise ActionError(f"tressette has no {parts.kind!r} action")

    def name(self, action: Action) -> str:
        return action_name(action)

    def parse(self, text: str) -> Action:
        return parse_action(text)


_CARD_STEPS = (("call", CALL_BASE), ("give", GIVE_BASE), ("discard", DISCARD_BASE))
_BIDS = ("pass", *CONTRACT_NAMES.values())
"""Bid texts by ``action - BID_PASS``: ``pass``, then the contracts from chiamo up."""


class CalabresellaCodec:
    """Calabresella's ids: cards (no signals), the auction, and the steps of the contracts."""

    def decode(self, action: Action) -> ActionParts:
        if 0 <= action < NUM_CARDS:
            return ActionParts("play", card=action)
        if BID_PASS <= action <= BID_SCEGLIETE:
            return ActionParts("bid", bid=_BIDS[action - BID_PASS])
        for kind, base in _CARD_STEPS:
            if base <= action < base + NUM_CARDS:
                return ActionParts(kind, card=action - base)
        if SPLIT_BASE <= action < SPLIT_BASE + 16:
            return ActionParts("split", mask=action - SPLIT_BASE)
        raise ActionError(f"action id {action} names no Calabresella action")

    def encode(self, parts: ActionParts) -> Action:
        if parts.kind == "play":
            if parts.signal:
                raise ActionError("calabresella has no signals")
            return _need_card(parts)
        if parts.kind == "bid":
            if parts.bid not in _BIDS:
                raise ActionError(f"unknown bid {parts.bid!r}; bids are {', '.join(_BIDS)}")
            return BID_PASS + _BIDS.index(parts.bid)
        for kind, base in _CARD_STEPS:
            if parts.kind == kind:
                return base + _need_card(parts)
        if parts.kind == "split":
            if parts.mask is None or not 0 <= parts.mask < 16:
                raise ActionError(f"a split takes a mask of 0 to 15, got {parts.mask!r}")
            return SPLIT_BASE + parts.mask
        raise ActionError(f"calabresella has no {parts.kind!r} action")

    def name(self, action: Action) -> str:
        return calabresella_action_name(action)

    def parse(self, text: str) -> Action:
        words = text.split()
        if len(words) == 1 and words[0] == "pass":
            return self.encode(ActionParts("bid", bid="pass"))
        if len(words) == 1:
            return self.encode(ActionParts("play", card=_card_of(words[0])))
        if len(words) != 2:
            raise ActionError(f"bad action {text!r}")
        head, rest = words
        if head == "bid":
            return self.encode(ActionParts("bid", bid=rest))
        if head == "split":
            if len(rest) != 4 or set(rest) - {"0", "1"}:
                raise ActionError(f"a split is written as four bits, e.g. split 0101: {text!r}")
            return self.encode(ActionParts("split", mask=int(rest, 2)))
        if head in ("call", "give", "discard"):
            return self.encode(ActionParts(head, card=_card_of(rest)))
        try:
            parse_card(head)
        except CardError:
            raise ActionError(f"bad action {text!r}") from None
        raise ActionError(f"calabresella has no signals: {text!r}")


TRESSETTE_CODEC = TressetteCodec()
CALABRESELLA_CODEC = CalabresellaCodec()
