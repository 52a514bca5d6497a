"""Tressette's action ids: cards with signals, declarations, the end of declarations, call-out.

==========================================  =========================
ids                                         text
==========================================  =========================
0..279 a card with a signal (``signal*40+c``)  ``3D``, ``AS volo``
300..319 a declaration (``300 + d``)           ``declare napoli-D``
320 end the declarations, 321 call out         ``end-declarations``
==========================================  =========================
"""

from __future__ import annotations

from referee.engine.cards import NUM_CARDS
from referee.engine.codec import Action, ActionError, ActionParts, need_card
from referee.families.tressette.actions import (
    CALL_OUT,
    DECLARE_BASE,
    END_DECLARATIONS,
    NUM_PLAY_ACTIONS,
    SIGNAL_NAMES,
    action_name,
    parse_action,
)
from referee.families.tressette.declarations import DECLARATION_NAMES

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
            return parts.signal * NUM_CARDS + need_card(parts)
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


TRESSETTE_CODEC = TressetteCodec()
