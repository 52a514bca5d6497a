"""Calabresella's action ids: cards (no signals), the auction, and the steps of the contracts.

==========================================  =========================
ids                                         text
==========================================  =========================
0..39 a card                                ``3D``
400..405 pass, or a bid                     ``pass``, ``bid solo``
440.. call, 480.. give, 520.. discard       ``call AD``
560..575 split the monte (``560 + mask``)   ``split 0101``
==========================================  =========================
"""

from __future__ import annotations

from referee.engine.cards import NUM_CARDS, CardError, parse_card
from referee.engine.codec import Action, ActionError, ActionParts, card_of_text, need_card
from referee.families.calabresella.auction import BID_PASS, BID_SCEGLIETE, CONTRACT_NAMES
from referee.families.calabresella.deal import CALL_BASE, DISCARD_BASE, GIVE_BASE, SPLIT_BASE
from referee.families.calabresella.deal import action_name as calabresella_action_name

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
            return need_card(parts)
        if parts.kind == "bid":
            if parts.bid not in _BIDS:
                raise ActionError(f"unknown bid {parts.bid!r}; bids are {', '.join(_BIDS)}")
            return BID_PASS + _BIDS.index(parts.bid)
        for kind, base in _CARD_STEPS:
            if parts.kind == kind:
                return base + need_card(parts)
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
            return self.encode(ActionParts("play", card=card_of_text(words[0])))
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
            return self.encode(ActionParts(head, card=card_of_text(rest)))
        try:
            parse_card(head)
        except CardError:
            raise ActionError(f"bad action {text!r}") from None
        raise ActionError(f"calabresella has no signals: {text!r}")


CALABRESELLA_CODEC = CalabresellaCodec()
