"""Tressette a tre: three seats, each alone, 12 cards each and a widow of 4.

Everything but the widow is Tressette under ``Rules(game="tressette-a-tre")``: the
preset sets 3 seats, a target of 21 and no signals, since nobody has a partner.
The widow (``widow = last_trick``, the only choice) stays face down and goes, with the
last trick, to the player who wins it, as captured cards.
"""

from __future__ import annotations

from referee.engine.cards import cards_of
from referee.families.tressette.deal import TressetteDeal


class TressetteATreDeal(TressetteDeal):
    """One deal of tressette a tre."""

    __slots__ = ()

    def _last_trick_extra(self) -> int:
        """The widow's card thirds go to the winner of the last trick."""
        return sum(self.rules.card_values[c % 10] for c in cards_of(self.widow))
