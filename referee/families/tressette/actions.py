"""Actions as integers, and their text.

==========  ===============================  =====================
ids         action                            text
==========  ===============================  =====================
0..279      play ``card`` with ``signal``     ``3D``, ``3D busso``
300..318    declare a combination             ``declare napoli-D``
320         end one's declarations            ``end-declarations``
321         call out (chiamarsi fuori)        ``call-out``
==========  ===============================  =====================

A play is ``signal * 40 + card``, so the ids 0..39 are plays without a signal.
"""

from __future__ import annotations

from enum import IntEnum

from referee.engine.cards import CARD_NAMES, NUM_CARDS, CardError, parse_card
from referee.engine.codec import Action, ActionError
from referee.families.tressette.declarations import DECLARATION_NAMES, parse_declaration


class Signal(IntEnum):
    """A partner signal attached to a played card."""

    NONE = 0
    """No signal."""
    BUSSO = 1
    """On leading: partner, play your highest of this suit and return it."""
    VOLO = 2
    """This is my last card of the suit."""
    STRISCIO = 3
    """I hold more cards of the suit."""
    RIBUSSO = 4
    """A stronger busso, where the ``ribusso`` knob allows it."""
    STRISCIO_LUNGO = 5
    """Striscio with 4 or more cards of the suit left (``striscio_lengths``)."""
    STRISCIO_CORTO = 6
    """Striscio with exactly 3 cards of the suit left (``striscio_lengths``; 1 to 3 under
    ``striscio_corto = one_to_three``)."""


SIGNAL_NAMES = ("", "busso", "volo", "striscio", "ribusso", "striscio-lungo", "striscio-corto")
_SIGNAL_IDS = {name: i for i, name in enumerate(SIGNAL_NAMES) if name}

NUM_PLAY_ACTIONS = NUM_CARDS * len(Signal)
DECLARE_BASE = 300
END_DECLARATIONS: Action = 320
CALL_OUT: Action = 321


def play_action(card: int, signal: Signal | int = Signal.NONE) -> Action:
    """The action that plays ``card`` with ``signal``."""
    return int(signal) * NUM_CARDS + card


def declare_action(declaration: int) -> Action:
    """The action that declares combination ``declaration``."""
    return DECLARE_BASE + declaration


def is_play(action: Action) -> bool:
    """Whether the action plays a card."""
    return 0 <= action < NUM_PLAY_ACTIONS


def is_declaration(action: Action) -> bool:
    """Whether the action declares a combination."""
    return DECLARE_BASE <= action < DECLARE_BASE + len(DECLARATION_NAMES)


def action_card(action: Action) -> int:
    """The card a play action plays."""
    return action % NUM_CARDS


def action_signal(action: Action) -> Signal:
    """The signal of a play action."""
    return Signal(action // NUM_CARDS)


def action_name(action: Action) -> str:
    """Text of an action, e.g. ``"AS volo"`` or ``"declare tre-3-noB"``."""
    if is_play(action):
        signal = SIGNAL_NAMES[action // NUM_CARDS]
        card = CARD_NAMES[action % NUM_CARDS]
        return f"{card} {signal}" if signal else card
    if is_declaration(action):
        return "declare " + DECLARATION_NAMES[action - DECLARE_BASE]
    if action == END_DECLARATIONS:
        return "end-declarations"
    if action == CALL_OUT:
        return "call-out"
    raise ActionError(f"action id {action} names no action")


def parse_action(text: str) -> Action:
    """The action of a text written as :func:`action_name` writes it."""
    words = text.split()
    if not words:
        raise ActionError("empty action")
    head = words[0].lower()
    if head == "declare" and len(words) == 2:
        return declare_action(parse_declaration(words[1]))
    if head == "end-declarations" and len(words) == 1:
        return END_DECLARATIONS
    if head == "call-out" and len(words) == 1:
        return CALL_OUT
    if len(words) > 2:
        raise ActionError(f"bad action {text!r}")
    try:
        card = parse_card(words[0])
    except CardError as exc:
        raise ActionError(str(exc)) from None
    signal = 0
    if len(words) == 2:
        signal = parse_signal(words[1])
    return play_action(card, signal)


def parse_signal(text: str) -> Signal:
    """The signal named by a text such as ``volo``."""
    try:
        return Signal(_SIGNAL_IDS[text.lower()])
    except KeyError:
        raise ActionError(f"bad signal {text!r}; signals are {', '.join(_SIGNAL_IDS)}") from None
