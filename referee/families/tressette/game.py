"""A game of the Tressette families: seeded deals, one after another, to the target.

:class:`TressetteGame` deals each deal from the seed (see :mod:`referee.engine.deals`),
rotates the dealer, adds up the scores and decides the outcome, as
:class:`~referee.engine.game_base.GameBase` says; this module says how a Tressette deal
starts, ends and is written into the record.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.engine.cards import CARD_NAMES, CardSet, cards_of, names
from referee.engine.codec import Action
from referee.engine.events import Drew, played, trick_taken
from referee.engine.game_base import GameBase, Termination
from referee.engine.observation import Observation
from referee.engine.rules import Rules
from referee.families.tressette.a_due_deal import TressetteADueDeal
from referee.families.tressette.actions import SIGNAL_NAMES
from referee.families.tressette.codec import TRESSETTE_CODEC
from referee.families.tressette.deal import TressetteDeal
from referee.families.tressette.declarations import (
    DECLARATION_CARDS,
    DECLARATION_NAMES,
    declaration_points,
)
from referee.families.tressette.events import (
    CalledOut,
    DeclarationsEnded,
    Declared,
    TressetteDealt,
    TressetteScored,
)


def new_deal(
    rules: Rules,
    hands: Sequence[CardSet],
    dealer: int,
    widow: CardSet = 0,
    totals: Sequence[int] | None = None,
    trump: int | None = None,
    stock: Sequence[int] = (),
) -> TressetteDeal:
    """A deal of the rules' game from given hands (``trump``: the briscola's shown card;
    ``stock``: tressette a due's undealt cards in draw order)."""
    deal_class: type[TressetteDeal] = rules.family.deal_class
    return deal_class(rules, hands, dealer, widow=widow, totals=totals, trump=trump, stock=stock)


def _cards(mask: CardSet) -> list[str]:
    return names(cards_of(mask))


class TressetteGame(GameBase[TressetteDeal, Observation]):
    """A game of the Tressette families (tressette, a tre, a due, ciapanò) over seeded deals."""

    _trick_count = 0
    _draws_logged = 0

    def _before_action(self) -> int:
        return len(self.deal.declared)  # the declarations made so far

    # -- deals ---------------------------------------------------------------------------

    def _start_deal(self) -> TressetteDeal:
        rules = self.rules
        dealt = self._next_cards()
        trump = dealt.last_card if rules.briscola else None
        if trump is not None and not (0 <= trump < 40 and dealt.hands[dealt.dealer] >> trump & 1):
            raise ValueError(f"the briscola's trump must be one of the dealer's cards, not {trump}")
        deal = new_deal(
            rules, dealt.hands, dealt.dealer, dealt.widow, self.totals, trump, dealt.stock
        )
        self._draws_logged = 0
        self._trick_count = 0
        if self.events is not None:
            self.events.append(
                TressetteDealt(
                    **self._dealt(dealt),
                    book_line=dealt.book_line or None,
                    stock=tuple(CARD_NAMES[c] for c in dealt.stock) if dealt.stock else None,
                    widow=tuple(_cards(dealt.widow)) if dealt.widow and not dealt.stock else None,
                    trump=None if trump is None else CARD_NAMES[trump],
                )
            )
            for seat, declaration in deal.declared:
                self._log_declaration(seat, declaration)
        return deal

    def _end_deal(self) -> None:
        deal = self.deal
        rules = self.rules
        if deal.call_out is not None:
            call = deal.call_out
            side = rules.side_of(call.seat)
            if call.correct:
                self._finish(Termination.CALLED_OUT, first=side)
            else:
                self._finish(Termination.CALLED_OUT, last=side)
            return
        score = deal.score
        assert score is not None
        for side, points in enumerate(score.points):
            self.totals[side] += points
        if self.events is not None:
            self.events.append(
                TressetteScored(
                    deal=self.deal_number,
                    last_trick=score.last_trick,
                    thirds=tuple(score.thirds),
                    card_points=tuple(score.card_points),
                    declarations=tuple(score.declarations),
                    cappotto=score.cappotto,
                    points=tuple(score.points),
                    totals=tuple(self.totals),
                )
            )
        if not self._end_if_over():
            self.deal = self._start_deal()  # below the target, or a tie at the top

    # -- events ----------------------------------------------------------------------------

    def _log_declaration(self, seat: int, declaration: int) -> None:
        assert self.events is not None
        self.events.append(
            Declared(
                seat,
                DECLARATION_NAMES[declaration],
                tuple(_cards(DECLARATION_CARDS[declaration])),
                declaration_points(declaration, self.rules.quattro_points),
            )
        )

    def _log_action(self, seat: int, action: Action, before: int) -> None:
        declared_before = before
        assert self.events is not None
        deal = self.deal
        parts = TRESSETTE_CODEC.decode(action)
        if parts.kind == "play":
            assert parts.card is not None
            signal = SIGNAL_NAMES[parts.signal]
            self.events.append(played(seat, CARD_NAMES[parts.card], signal or None))
            winners = deal.trick_winners
            if len(winners) > self._trick_count:
                self._trick_count = len(winners)
                self.events.append(trick_taken(self._trick_count, winners[-1]))
                if isinstance(deal, TressetteADueDeal):
                    draws = deal.draws()
                    for s, card in draws[self._draws_logged :]:
                        self.events.append(Drew(s, CARD_NAMES[card]))
                    self._draws_logged = len(draws)
        elif parts.kind == "declare":
            for s, declaration in deal.declared[declared_before:]:
                self._log_declaration(s, declaration)
        elif parts.kind == "end-declarations":
            self.events.append(DeclarationsEnded(seat))
        elif parts.kind == "call-out":
            call = deal.call_out
            assert call is not None
            self.events.append(CalledOut(seat, call.claimed, call.correct))
