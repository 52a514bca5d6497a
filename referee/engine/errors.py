"""Errors the engine raises for actions that break the rules."""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """Machine-readable reason an action was refused."""

    NOT_YOUR_TURN = "not_your_turn"
    GAME_OVER = "game_over"
    UNKNOWN_ACTION = "unknown_action"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    MUST_FOLLOW_SUIT = "must_follow_suit"
    SIGNAL_NOT_ALLOWED = "signal_not_allowed"
    """The signal is not allowed here by the ``signals`` mode or a knob."""
    BUSSO_NOT_LEADING = "busso_not_leading"
    FALSE_SIGNAL = "false_signal"
    """Volo or striscio that the player's own hand contradicts."""
    FALSE_DECLARATION = "false_declaration"
    LATE_DECLARATION = "late_declaration"
    ALREADY_DECLARED = "already_declared"
    DECLARATION_LIMIT = "declaration_limit"
    DECLARATIONS_OFF = "declarations_off"
    DECLARATIONS_FIRST = "declarations_first"
    """A card played during the declaration round of ``declare_before_first_card``."""
    NOT_DECLARING = "not_declaring"
    CALL_OUT_NOT_ALLOWED = "call_out_not_allowed"


class RulesError(ValueError):
    """An unknown game, preset or knob, or a knob value out of range."""


class IllegalActionError(ValueError):
    """An action the rules forbid in this state; ``reason`` says why for machines."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class FileLineError(ValueError):
    """A problem at a line of a file: ``file:line: message`` (``file: message`` for none)."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line
        self.message = message
