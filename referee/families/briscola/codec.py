"""Briscola's action ids: a play is its card's id, 0..39, and there is no other action.

The text of a play is the card's (``3D``); Briscola has no signals, so ``3D volo`` is
refused. The codec follows :class:`referee.engine.codec.ActionCodec`.
"""

from __future__ import annotations

from referee.engine.cards import CARD_NAMES, NUM_CARDS, CardError, parse_card
from referee.engine.codec import Action, ActionError, ActionParts

_PLAYS = tuple(ActionParts("play", card=card) for card in range(NUM_CARDS))


class BriscolaCodec:
    """Briscola's ids: plays of a card, without signals."""

    def decode(self, action: Action) -> ActionParts:
        if 0 <= action < NUM_CARDS:
            return _PLAYS[action]
        raise ActionError(f"action id {action} names no Briscola action: a play is 0..39")

    def encode(self, parts: ActionParts) -> Action:
        if parts.kind != "play":
            raise ActionError(f"briscola has no {parts.kind!r} action")
        if parts.signal:
            raise ActionError("briscola has no signals")
        if parts.card is None or not 0 <= parts.card < NUM_CARDS:
            raise ActionError(f"a play needs a card, got {parts.card!r}")
        return parts.card

    def name(self, action: Action) -> str:
        self.decode(action)  # ActionError for an id of no play
        return CARD_NAMES[action]

    def parse(self, text: str) -> Action:
        words = text.split()
        if len(words) != 1:
            raise ActionError(f"a Briscola action is one card, without signals: {text!r}")
        try:
            return parse_card(words[0])
        except CardError as exc:
            raise ActionError(str(exc)) from None


BRISCOLA_CODEC = BriscolaCodec()
