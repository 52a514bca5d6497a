"""A game of Briscola: deals until a side has won ``rules.target`` of them, and its record.

Each deal won adds 1 to its side's total; a drawn deal (60 each) adds nothing, so another
is played. The dealer passes to the next seat each deal. :class:`BriscolaGame` writes the
deal (hands, stock in draw order, trump), each play, each trick and the draws after it
(hidden ones too: the record is read after the match), and each deal's score.
"""

from __future__ import annotations

from referee.engine.cards import CARD_NAMES, names
from referee.engine.codec import Action
from referee.engine.events import Drew, played, trick_taken
from referee.engine.game_base import GameBase
from referee.engine.observation import Observation
from referee.families.briscola.deal import BriscolaDeal
from referee.families.briscola.events import BriscolaDealt, BriscolaScored


class BriscolaGame(GameBase[BriscolaDeal, Observation]):
    """A game of Briscola, for two seats or four in partnerships, over seeded deals."""

    _tricks_logged = 0
    _draws_logged = 0

    def _start_deal(self) -> BriscolaDeal:
        dealt = self._next_cards()
        deal = BriscolaDeal(
            self.rules, dealt.hands, dealt.dealer, stock=dealt.stock, totals=self.totals
        )
        self._tricks_logged = 0
        self._draws_logged = 0
        if self.events is not None:
            self.events.append(
                BriscolaDealt(
                    **self._dealt(dealt),
                    book_line=dealt.book_line or None,
                    stock=tuple(names(dealt.stock)),
                    trump=CARD_NAMES[deal.trump],
                )
            )
        return deal

    def _end_deal(self) -> None:
        score = self.deal.score
        assert score is not None
        for side, points in enumerate(score.points):
            self.totals[side] += points
        if self.events is not None:
            self.events.append(
                BriscolaScored(
                    deal=self.deal_number,
                    card_points=tuple(score.card_points),
                    points=tuple(score.points),
                    totals=tuple(self.totals),
                )
            )
        if not self._end_if_over():
            self.deal = self._start_deal()  # no side has won enough deals yet

    def _log_action(self, seat: int, action: Action, before: int) -> None:
        events = self.events
        assert events is not None
        deal = self.deal
        events.append(played(seat, CARD_NAMES[action]))
        tricks = deal.tricks_played
        if tricks > self._tricks_logged:
            self._tricks_logged = tricks
            events.append(trick_taken(tricks, deal.trick_winners[-1]))
            draws = deal.draws()
            for s, card in draws[self._draws_logged :]:
                events.append(Drew(s, CARD_NAMES[card]))
            self._draws_logged = len(draws)
