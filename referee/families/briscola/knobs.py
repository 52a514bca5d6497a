"""Briscola's knobs: the values its preset gives, and the knobs its rules refuse.

Briscola reads ``target`` and ``card_values`` (whole card points here); every other knob
changes nothing in it, but two would say something false: ``briscola`` (Tressette con la
briscola's shown card; Briscola always turns its trump up) and ``call_out``.
"""

from __future__ import annotations

from referee.engine.rules import Rules

CARD_VALUES = (10, 0, 11, 4, 3, 2, 0, 0, 0, 0)
"""Card points per rank ``3 2 A K Q J 7 6 5 4``: A 11, 3 10, K 4, Q 3, J 2; 120 in all."""
TARGET = 2
"""Deals a side must win: best of three, a drawn deal counting for nobody."""


def check_knobs(rules: Rules) -> str | None:
    """What Briscola refuses of ``rules``, as an error text; None if nothing."""
    if rules.briscola:
        return "knob 'briscola' is Tressette con la briscola's; Briscola always turns its trump up"
    if rules.call_out:
        return "knob 'call_out' has no meaning in Briscola: nobody calls out"
    return None
