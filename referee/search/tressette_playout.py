"""A fast greedy policy that plays a Tressette deal out with every hand in view.

PIMC evaluates an action in a sampled world by playing the rest of the deal with this
policy for every seat. It sees all the world's hands (that is what makes the world
"perfect information"), never signals, and declares what the engine offers.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.engine.cards import NUM_CARDS, SUIT_MASKS, cards_of
from referee.engine.codec import Action
from referee.engine.observation import Phase
from referee.engine.rules import Rules
from referee.families.tressette.actions import END_DECLARATIONS, is_declaration
from referee.families.tressette.deal import TressetteDeal

_SUIT = tuple(c // 10 for c in range(NUM_CARDS))


_BY_SUIT = tuple(
    tuple(tuple(c + 10 * s for c in cards_of(m)) for m in range(1 << 10)) for s in range(4)
)
"""``_BY_SUIT[suit][pattern]``: the card ids of a suit's 10-bit pattern."""


class Playout:
    """The policy for one rule set: card values and sides computed once."""

    def __init__(self, rules: Rules) -> None:
        self.players = rules.players
        self.values = tuple(rules.card_values[c % 10] for c in range(NUM_CARDS))
        self.side = tuple(rules.side_of(s) for s in range(self.players))
        self.lower_wins = rules.lower_wins
        self.sides = rules.sides
        self.draws = rules.game == "tressette-a-due"
        """Whether the stock's face-down cards may still reach another hand."""

    def value(self, deal: TressetteDeal, seat: int) -> float:
        """The finished deal's worth to ``seat``: its side's points less the others' mean
        (turned round where points count against)."""
        score = deal.score
        if score is None:
            raise ValueError("the deal is not finished (or a seat called out)")
        points = score.points
        mine = self.side[seat]
        others = (sum(points) - points[mine]) / (self.sides - 1)
        worth = points[mine] - others
        return -worth if self.lower_wins else worth

    def play_out(self, deal: TressetteDeal) -> None:
        """Play ``deal`` to its end with the policy."""
        while not deal.is_terminal():
            deal.apply_action(self.choose(deal))

    def choose(self, deal: TressetteDeal) -> Action:
        """The policy's action for the seat to act."""
        if deal.phase == Phase.DECLARE:
            declared = [a for a in deal.legal_actions() if is_declaration(a)]
            return declared[0] if declared else END_DECLARATIONS
        seat = deal.current_player()
        assert seat is not None
        hand = deal.hand(seat)
        n, led, best, best_seat = deal.trick_state()
        # The plain plays, read off the hand: the led suit's cards if it holds any (the
        # engine's follow rule), else every card. A plain play is always legal.
        if n and hand & SUIT_MASKS[led]:
            hand &= SUIT_MASKS[led]
        d, c, sp, b = _BY_SUIT
        plain = d[hand & 1023] + c[hand >> 10 & 1023] + sp[hand >> 20 & 1023] + b[hand >> 30]
        if len(plain) == 1:
            return plain[0]
        others = 0
        for s in range(self.players):
            if s != seat:
                others |= deal.hand(s)
        if self.draws:
            others |= deal.widow
        trump = -1 if deal.trump is None else _SUIT[deal.trump]
        if self.lower_wins:
            return self._avoid(plain, n, led, best)
        if not n:
            return self._lead(plain, others, trump)
        return self._follow(deal, plain, seat, n, best, best_seat, others, trump)

    def _beats(self, card: int, best: int, trump: int) -> bool:
        if _SUIT[card] == _SUIT[best]:
            return card < best
        return _SUIT[card] == trump

    def _master(self, card: int, others: int, trump: int) -> bool:
        """No card left in another hand beats ``card`` (led, or followed to)."""
        suit = _SUIT[card]
        stronger = others & SUIT_MASKS[suit] & ((1 << card) - 1)
        if stronger:
            return False
        return trump in (-1, suit) or not others & SUIT_MASKS[trump]

    def _cheap(self, card: int) -> tuple[int, int]:
        return self.values[card], -card

    def _lead(self, plain: Sequence[int], others: int, trump: int) -> Action:
        masters = [c for c in plain if self._master(c, others, trump)]
        if masters:
            return max(masters, key=lambda c: (self.values[c], -c))
        by_suit: dict[int, list[int]] = {}
        for c in plain:
            by_suit.setdefault(_SUIT[c], []).append(c)
        longest = max(by_suit.values(), key=len)
        return min(longest, key=self._cheap)

    def _follow(
        self,
        deal: TressetteDeal,
        plain: Sequence[int],
        seat: int,
        n: int,
        best: int,
        best_seat: int,
        others: int,
        trump: int,
    ) -> Action:
        last = n == self.players - 1
        # Cards of the seats still to play (the partner's count as no threat).
        after = 0
        s = seat
        for _ in range(self.players - 1 - n):
            s = (s + 1) % self.players
            if self.side[s] != self.side[seat]:
                after |= deal.hand(s)
        ours = self.side[best_seat] == self.side[seat]
        if ours and (last or self._master(best, after, trump)):
            loads = [c for c in plain if not self._master(c, others, trump)] or plain
            return max(loads, key=lambda c: (self.values[c], c))
        beaters = [c for c in plain if self._beats(c, best, trump)]
        sure = beaters if last else [c for c in beaters if self._master(c, after, trump)]
        if sure and not ours:
            return max(sure)  # the weakest card sure to take it
        if beaters and not ours:
            low = max(beaters)
            if not self.values[low]:
                return low
        return min(plain, key=self._cheap)

    def _avoid(self, plain: Sequence[int], n: int, led: int, best: int) -> Action:
        """Ciapanò: duck the trick, unloading the costliest card; lead the weakest."""
        if not n:
            return max(plain, key=lambda c: (c % 10, -self.values[c]))
        ducks = [c for c in plain if _SUIT[c] != led or c > best]
        if ducks:
            return max(ducks, key=lambda c: (self.values[c], -(c % 10)))
        return min(plain, key=lambda c: (self.values[c], -c))
