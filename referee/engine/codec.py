"""Action ids: what every family's codec does, and the parts an id is taken apart into.

An action is an int. What it means depends on the family, and every place that shows or
reads actions asks the family's codec (``Family.codec`` in ``referee.engine.registry``):
the engine's texts, the protocol's ``Action`` messages, the records' action lines, the
conformance checks. Each family's ids are tabled in its own ``codec.py``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Protocol

from referee.engine.cards import NUM_CARDS, CardError, parse_card

Action = int
"""An action id; its family's codec says what it means."""


class ActionError(ValueError):
    """Text or an id that names no action."""


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


def card_of_text(text: str) -> int:
    """The card a text names; ActionError if none."""
    try:
        return parse_card(text)
    except CardError as exc:
        raise ActionError(str(exc)) from None


def need_card(parts: ActionParts) -> int:
    """The card of ``parts``; ActionError if it has none."""
    if parts.card is None or not 0 <= parts.card < NUM_CARDS:
        raise ActionError(f"a {parts.kind} action needs a card, got {parts.card!r}")
    return parts.card
