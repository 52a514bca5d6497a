"""A fast policy that plays a Calabresella deal to its end, from any step, every hand in view.

PIMC evaluates an action in a sampled world by finishing the deal with this policy for
every seat. Outside the play it makes the ``heuristic`` bot's choices: bid from the
hand's strength (chiamo from 6, solo from 7.5, solissimo from 9), call the missing 3
(else 2) of the longest suit, give and discard the cheapest cards of the shortest suits,
and as first defender in scegliete take the monte cards worth points. In the play it
sees every hand: it leads a card no other hand can beat, else the lowest of its longest
suit; it loads a trick its side surely wins, takes one with the weakest sure winner, or
else throws its cheapest card.
"""

from __future__ import annotations

from referee.engine.cards import NUM_CARDS, SUIT_MASKS, cards_of
from referee.engine.rules import Rules
from referee.families.calabresella.auction import BID_CHIAMO, BID_PASS, BID_SOLISSIMO, BID_SOLO
from referee.families.calabresella.deal import (
    CALL_BASE,
    DISCARD_BASE,
    GIVE_BASE,
    SPLIT_BASE,
    Action,
    CalabresellaDeal,
    Phase,
)

_SUIT = tuple(c // 10 for c in range(NUM_CARDS))
_RANK = tuple(c % 10 for c in range(NUM_CARDS))
BID_FROM = ((9.0, BID_SOLISSIMO), (7.5, BID_SOLO), (6.0, BID_CHIAMO))
"""Hand strength from which each contract is bid (the ``heuristic`` bot's thresholds)."""
TIE_BREAK = 0.01
"""Weight of a side's card thirds in a deal's worth: it orders plays that change no payout
and is too small (at most 0.35) to outweigh one game point."""


class Playout:
    """The policy for one rule set: card values computed once."""

    def __init__(self, rules: Rules) -> None:
        self.values = tuple(rules.card_values[c % 10] for c in range(NUM_CARDS))
        worths = sorted(set(self.values))
        self.by_worth = tuple(
            sum(1 << c for c in range(NUM_CARDS) if self.values[c] == w) for w in worths
        )
        """The cards of each worth, the cheapest first."""

    def value(self, deal: CalabresellaDeal, seat: int) -> float:
        """The finished deal's worth to ``seat``: its payout, plus :data:`TIE_BREAK` times its
        side's card thirds less the other side's (0 for a redeal or the seat sitting out)."""
        score = deal.score
        if score is None:
            raise ValueError("the deal is not finished")
        if score.redeal or score.soloist is None:
            return 0.0
        payout = score.payouts[seat]
        if seat not in deal.order:
            return float(payout)
        margin = score.thirds[0] - score.thirds[1]
        return payout + TIE_BREAK * (margin if seat == score.soloist else -margin)

    def play_out(self, deal: CalabresellaDeal) -> None:
        """Play ``deal`` to its end with the policy."""
        while not deal.is_terminal():
            deal.apply_action(self.choose(deal))

    def strength(self, hand: int) -> float:
        """The heuristic's hand strength: card points, plus 0.7 a 3 and 0.3 a 2."""
        thirds = threes = twos = 0
        for c in cards_of(hand):
            thirds += self.values[c]
            threes += _RANK[c] == 0
            twos += _RANK[c] == 1
        return thirds / 3 + 0.7 * threes + 0.3 * twos

    def choose(self, deal: CalabresellaDeal) -> Action:
        """The policy's action for the seat to act."""
        phase = deal.phase
        seat = deal.current_player()
        assert seat is not None
        hand = deal.hand(seat)
        if phase is Phase.PLAY:
            return self._play(deal, seat, hand)
        if phase is Phase.AUCTION:
            return self.bid(deal.legal_actions(), self.strength(hand))
        if phase is Phase.CALL:
            return CALL_BASE + self.call_card(hand)
        if phase is Phase.GIVE:
            assert deal.called is not None
            return GIVE_BASE + self.cheapest(hand & ~(1 << deal.called), hand)
        if phase is Phase.DISCARD:
            return DISCARD_BASE + self.cheapest(hand, hand)
        monte = cards_of(deal.monte)
        return SPLIT_BASE + sum(1 << i for i, c in enumerate(monte) if self.values[c])

    @staticmethod
    def bid(legal: tuple[Action, ...], strength: float) -> Action:
        """The highest legal bid up to the one ``strength`` is worth; else pass."""
        wanted = next((bid for level, bid in BID_FROM if strength >= level), BID_PASS)
        return max((b for b in legal if b <= wanted), default=BID_PASS)

    @staticmethod
    def call_card(hand: int) -> int:
        """The missing 3 (else 2) of the longest suit; else the weakest card lacking."""
        suits = sorted(range(4), key=lambda s: -(hand & SUIT_MASKS[s]).bit_count())
        for rank in (0, 1):
            for suit in suits:
                card = 10 * suit + rank
                if not hand >> card & 1:
                    return card
        return next(c for c in range(NUM_CARDS - 1, -1, -1) if not hand >> c & 1)

    def cheapest(self, choices: int, hand: int) -> int:
        """Of ``choices``, the card of fewest points, then of the shortest suit of ``hand``,
        then the weakest."""
        length = [(hand & SUIT_MASKS[s]).bit_count() for s in range(4)]
        return min(cards_of(choices), key=lambda c: (self.values[c], length[_SUIT[c]], -_RANK[c]))

    def _cheapest(self, mask: int) -> int:
        """The card of ``mask`` worth least, the weakest (highest id) of those."""
        for cards in self.by_worth:
            if mask & cards:
                return (mask & cards).bit_length() - 1
        raise ValueError("no card to choose from")

    def _richest(self, mask: int, weakest: bool) -> int:
        """The card of ``mask`` worth most, the weakest of those or else the strongest."""
        for cards in reversed(self.by_worth):
            found = mask & cards
            if found:
                return found.bit_length() - 1 if weakest else (found & -found).bit_length() - 1
        raise ValueError("no card to choose from")

    def _play(self, deal: CalabresellaDeal, seat: int, hand: int) -> Action:
        trick = deal.trick
        order = deal.order
        if trick:
            led_mask = SUIT_MASKS[_SUIT[trick[0][1]]]
            if hand & led_mask:
                hand &= led_mask
        if not hand & (hand - 1):
            return hand.bit_length() - 1
        others = 0
        for s in order:
            if s != seat:
                others |= deal.hand(s)
        if not trick:
            masters = 0
            longest = 0
            for suit_mask in SUIT_MASKS:
                mine = hand & suit_mask
                if not mine:
                    continue
                theirs = others & suit_mask
                masters |= mine & ((theirs & -theirs) - 1) if theirs else mine
                if mine.bit_count() > longest.bit_count():
                    longest = mine
            if masters:
                return self._richest(masters, weakest=False)
            return self._cheapest(longest)
        soloist = deal.soloist
        best_seat, best = trick[0]
        for s, c in trick[1:]:
            if c < best and _SUIT[c] == _SUIT[best]:
                best_seat, best = s, c
        # The hand still to play, if it is an opponent's: what it can beat.
        threat = 0
        if len(trick) == 1:
            nxt = order[(order.index(seat) + 1) % 3]
            if (nxt == soloist) != (seat == soloist):
                threat = deal.hand(nxt) & led_mask
        top = threat & -threat  # the strongest card of the suit it holds (0: none)
        ours = (best_seat == soloist) == (seat == soloist)
        if ours and (not top or best < top):
            return self._richest(hand, weakest=True)
        if not ours:
            beaters = hand & led_mask & ((1 << best) - 1)
            winners = beaters & (top - 1) if top else beaters
            if winners:
                return winners.bit_length() - 1  # the weakest card sure to take it
            if beaters:
                weakest = beaters.bit_length() - 1
                if not self.values[weakest]:
                    return weakest
        return self._cheapest(hand)
