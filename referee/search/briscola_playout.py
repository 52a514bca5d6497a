"""A fast greedy policy that plays a Briscola deal out with every hand in view.

PIMC evaluates an action in a sampled world by playing the rest of the deal with this
policy for every seat. It sees the hands still to play to the trick, and weighs each card:
a trick it is sure to take is worth its points, one it may lose costs the points it
gives away; spending a trump costs a little more, the higher the trump the more. It does
not look at the stock's order, though the world knows it.
"""

from __future__ import annotations

from referee.engine.cards import NUM_CARDS, SUIT_MASKS, cards_of
from referee.engine.codec import Action
from referee.engine.rules import Rules
from referee.families.briscola.deal import TRICK_PLACE, BriscolaDeal

TRUMP_COST = 4.0
"""What spending a trump costs, in card points, before its rank's share: about a king."""
MARGIN_WEIGHT = 0.5
"""The card-point margin's share of a deal's worth, at most: a deal won is worth more
than any margin, and a wider margin a little more than a narrow one."""

_SUIT = tuple(c // 10 for c in range(NUM_CARDS))
_PLACE = tuple(TRICK_PLACE[c % 10] for c in range(NUM_CARDS))
_BEATERS = tuple(
    tuple(
        (SUIT_MASKS[trump] if _SUIT[c] != trump else 0)
        | sum(1 << d for d in range(NUM_CARDS) if _SUIT[d] == _SUIT[c] and _PLACE[d] < _PLACE[c])
        for c in range(NUM_CARDS)
    )
    for trump in range(4)
)
"""``_BEATERS[trump suit][card]``: the cards that take a trick from ``card``."""


class Playout:
    """The policy for one rule set: card values and sides computed once."""

    def __init__(self, rules: Rules) -> None:
        self.players = rules.players
        self.values = tuple(rules.card_values[c % 10] for c in range(NUM_CARDS))
        self.side = tuple(rules.side_of(s) for s in range(self.players))
        self.total = sum(self.values)

    def value(self, deal: BriscolaDeal, seat: int) -> float:
        """The finished deal's worth to ``seat``: its side's deal points less the other's,
        and :data:`MARGIN_WEIGHT` of the card-point margin as a share of all points."""
        score = deal.score
        if score is None:
            raise ValueError("the deal is not finished")
        mine = self.side[seat]
        won = score.points[mine] - score.points[1 - mine]
        margin = score.card_points[mine] - score.card_points[1 - mine]
        return won + MARGIN_WEIGHT * margin / self.total

    def play_out(self, deal: BriscolaDeal) -> None:
        """Play ``deal`` to its end with the policy."""
        while not deal.is_terminal():
            deal.apply_action(self.choose(deal))

    def choose(self, deal: BriscolaDeal) -> Action:
        """The policy's card for the seat to act."""
        seat = deal.current_player()
        assert seat is not None
        hand = cards_of(deal.hand(seat))
        if len(hand) == 1:
            return hand[0]
        trick = deal.trick
        n = len(trick)
        best, best_seat = deal.trick_winning()
        trump = _SUIT[deal.trump]
        beaters = _BEATERS[trump]
        side = self.side[seat]
        after = 0  # the cards of the opponents still to play to this trick
        for i in range(1, self.players - n):
            other = (seat + i) % self.players
            if self.side[other] != side:
                after |= deal.hand(other)
        in_trick = sum(self.values[card] for _, card in trick)

        def worth(card: int) -> float:
            top, top_seat = best, best_seat
            if not n or beaters[best] >> card & 1:
                top, top_seat = card, seat
            points = in_trick + self.values[card]
            spent = TRUMP_COST + (9 - _PLACE[card]) / 4 if _SUIT[card] == trump else 0.0
            if self.side[top_seat] == side and not after & beaters[top]:
                return points - spent
            # Lost, or may be: the points go with it; the weaker card of equals goes first.
            return -points - spent - (9 - _PLACE[card]) / 100

        return max(hand, key=worth)
