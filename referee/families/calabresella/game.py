"""A game of Calabresella: deals until a player reaches the target, and its record.

The deal itself (auction, monte, play, score) is :mod:`referee.families.calabresella.deal`.
Here: the dealer passes to the right after each deal but deals again when all pass; with
four at the table the dealer sits out; the payouts add up per player; the first player at
or above the target at the end of a deal wins, the higher total if several, and an exact
tie at the top plays one more deal. Every step is a record line; the steps only some may
see (the card given in chiamo, discards) are in the record, which is read after the match.
"""

from __future__ import annotations

from referee.engine.cards import CARD_NAMES, CardSet, cards_of
from referee.engine.codec import Action
from referee.engine.events import Event, played, trick_taken
from referee.engine.game_base import GameBase
from referee.families.calabresella.auction import CONTRACT_NAMES
from referee.families.calabresella.codec import CALABRESELLA_CODEC
from referee.families.calabresella.deal import (
    CalabresellaDeal,
    CalabresellaObservation,
)
from referee.families.calabresella.events import (
    Bid,
    CalabresellaDealt,
    CalabresellaScored,
    Called,
    ContractMade,
    Discarded,
    Given,
    Redealt,
    Split,
)


def _cards(mask: CardSet) -> list[str]:
    return [CARD_NAMES[c] for c in cards_of(mask)]


_FACE_DOWN: dict[str, type[Given] | type[Discarded]] = {"give": Given, "discard": Discarded}
"""The events of the card steps no one else sees."""


class CalabresellaGame(GameBase[CalabresellaDeal, CalabresellaObservation]):
    """A game of Calabresella over seeded deals."""

    _redeal = False
    _tricks_logged = 0

    def _start_deal(self) -> CalabresellaDeal:
        rules = self.rules
        dealt = self._next_cards(pass_the_deal=not self._redeal)
        self._redeal = False
        self._tricks_logged = 0
        dealer = dealt.dealer
        hands = list(dealt.hands)
        deal = CalabresellaDeal(rules, hands, dealer, dealt.widow)
        if self.events is not None:
            self.events.append(
                CalabresellaDealt(
                    **self._dealt(dealt),
                    monte=tuple(_cards(dealt.widow)),
                    book_line=dealt.book_line or None,
                )
            )
        return deal

    def _end_deal(self) -> None:
        score = self.deal.score
        assert score is not None
        if score.redeal:
            if self.events is not None:
                self.events.append(Redealt(self.deal_number))
            if not self._end_if_over():
                self._redeal = True
                self.deal = self._start_deal()
            return
        for seat, points in enumerate(score.payouts):
            self.totals[seat] += points
        if self.events is not None:
            # A deal is scored once a contract is made, so it has a soloist and a last trick.
            assert score.contract is not None
            assert score.soloist is not None and score.last_trick is not None
            self.events.append(
                CalabresellaScored(
                    deal=self.deal_number,
                    contract=CONTRACT_NAMES[score.contract],
                    soloist=score.soloist,
                    soloist_points=score.soloist_points,
                    success=score.success,
                    cappotto=score.cappotto,
                    stramazzo=score.stramazzo,
                    value=score.value,
                    thirds=tuple(score.thirds),
                    last_trick=score.last_trick,
                    set_aside=tuple(_cards(self.deal.set_aside)),
                    points=tuple(score.payouts),
                    totals=tuple(self.totals),
                )
            )
        if not self._end_if_over():
            self.deal = self._start_deal()

    def _log_action(self, seat: int, action: Action, before: int) -> None:
        assert self.events is not None
        deal = self.deal
        parts = CALABRESELLA_CODEC.decode(action)
        event: Event
        if parts.kind == "bid":
            assert parts.bid is not None
            event = Bid(seat, parts.bid)
        elif parts.kind == "split":
            assert parts.mask is not None
            monte = list(cards_of(deal.monte))
            event = Split(
                seat, tuple(CARD_NAMES[c] for i, c in enumerate(monte) if parts.mask >> i & 1)
            )
        else:
            assert parts.card is not None
            card = CARD_NAMES[parts.card]
            if parts.kind == "call":
                event = Called(seat, card, deal.called_holder)
            elif parts.kind == "play":
                event = played(seat, card)
            else:
                event = _FACE_DOWN[parts.kind](seat, card)
        self.events.append(event)
        if isinstance(event, Bid) and deal.auction.is_over and deal.contract is not None:
            assert deal.soloist is not None
            self.events.append(ContractMade(deal.soloist, CONTRACT_NAMES[deal.contract]))
        tricks = deal.tricks
        if len(tricks) > self._tricks_logged:
            self._tricks_logged = len(tricks)
            self.events.append(trick_taken(len(tricks), tricks[-1][1]))
