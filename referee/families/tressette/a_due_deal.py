"""Tressette a due: two seats, each alone, 10 cards each and a stock of 20 (RULES.md §5).

Everything but the stock is Tressette under ``Rules(game="tressette-a-due")``. After each
trick, while the stock lasts, the winner draws its top card and then the loser draws the
next; both drawn cards are shown to both players, so :meth:`TressetteADueDeal.draws` is
public. The stock runs out after trick 10 and the last 10 tricks are played out from the
hands: 20 tricks in all. Follow suit always applies (the base's rule). Declarations come
from the 10 cards first dealt only: they are open on a player's first turn, before any
card is drawn, and :meth:`~TressetteADueDeal.initial_hand` leaves drawn cards out.

The seeded stock is ``shuffled_deck(game, seed, number)[20:]``, top first: deck position
20 is drawn first (``deal_cards`` deals positions 0..19 and returns 20..39 as its widow).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from referee.engine.cards import NUM_CARDS, CardSet
from referee.engine.deals import deal_cards, shuffled_deck
from referee.engine.observation import Observation
from referee.engine.rules import Rules
from referee.families.tressette.deal import TressetteDeal

GAME = "tressette-a-due"
HAND_SIZE = 10
"""Cards each seat is dealt."""
STOCK_SIZE = NUM_CARDS - 2 * HAND_SIZE
"""Cards left face down after the deal: 20, two drawn after each of the first 10 tricks."""


def seeded_stock(seed: str, number: int, game: str = GAME) -> tuple[int, ...]:
    """The stock of deal ``number`` of ``seed``, in draw order (top card first)."""
    return tuple(shuffled_deck(game, seed, number)[NUM_CARDS - STOCK_SIZE :])


class TressetteADueDeal(TressetteDeal):
    """One deal of tressette a due.

    ``stock`` is the undealt cards in draw order, top first. ``widow``, accepted for the
    signature of :func:`~referee.families.tressette.game.new_deal`, must be 0 or the stock's cards;
    a stock without its order cannot be played, so a widow without a ``stock`` is refused.

    ``widow`` then holds the cards still face down in the stock: it shrinks with each
    draw, so hands, played cards and ``widow`` always make up the deck. ``stock`` keeps
    the order as dealt (hidden from the players, like the widow of a tre).
    """

    __slots__ = ("_drawn", "_draws", "_next_draw", "stock")

    def __init__(
        self,
        rules: Rules,
        hands: Sequence[CardSet],
        dealer: int,
        *,
        stock: Sequence[int] = (),
        widow: CardSet = 0,
        totals: Sequence[int] | None = None,
        trump: int | None = None,
    ) -> None:
        if rules.players != 2:
            raise ValueError(f"tressette a due needs a two-seat game, not {rules.game!r}")
        stock = tuple(stock)
        mask = 0
        for card in stock:
            if not 0 <= card < NUM_CARDS or mask >> card & 1:
                raise ValueError(f"the stock must hold distinct cards 0..39, got {stock}")
            mask |= 1 << card
        if len(stock) % 2:
            raise ValueError(f"the stock must hold an even number of cards, got {len(stock)}")
        if any(mask & h for h in hands) or (len(hands) == 2 and hands[0] & hands[1]):
            raise ValueError("a card is both in a hand and in the stock, or in both hands")
        if widow and widow != mask:
            raise ValueError(
                "tressette a due needs the stock in draw order (keyword stock); "
                "the widow, if given, must be the same cards"
            )
        super().__init__(rules, hands, dealer, widow=mask, totals=totals, trump=trump)
        self.stock = stock
        """The stock as dealt, in draw order (top first); hidden from the players."""
        self._next_draw = 0
        self._draws: list[tuple[int, int]] = []
        self._drawn = [0, 0]

    @classmethod
    def from_seed(
        cls,
        rules: Rules,
        seed: str,
        number: int,
        dealer: int,
        *,
        totals: Sequence[int] | None = None,
    ) -> TressetteADueDeal:
        """Deal ``number`` of ``seed``: ``deal_cards``' hands and the stock in deck order."""
        dealt = deal_cards(rules.game, seed, number, dealer, 2)
        return cls(
            rules,
            dealt.hands,
            dealt.dealer,
            stock=seeded_stock(seed, number, rules.game),
            widow=dealt.widow,
            totals=totals,
        )

    # -- the stock -------------------------------------------------------------------------

    def _after_trick(self, winner: int) -> None:
        """The winner draws the top card, then the loser the next; then the base's check."""
        i = self._next_draw
        stock = self.stock
        if i < len(stock):
            loser = 1 - winner
            first, second = stock[i], stock[i + 1]
            self._hands[winner] |= 1 << first
            self._hands[loser] |= 1 << second
            self._drawn[winner] |= 1 << first
            self._drawn[loser] |= 1 << second
            self.widow ^= (1 << first) | (1 << second)
            self._draws.append((winner, first))
            self._draws.append((loser, second))
            self._next_draw = i + 2
        super()._after_trick(winner)

    def draws(self) -> tuple[tuple[int, int], ...]:
        """Every card drawn so far, as (seat, card), in order. Public: both players see them."""
        return tuple(self._draws)

    def stock_left(self) -> int:
        """Cards still in the stock (public: both players can count them)."""
        return len(self.stock) - self._next_draw

    def drawn(self, seat: int) -> CardSet:
        """The cards ``seat`` has drawn from the stock, played or not."""
        return self._drawn[seat]

    def initial_hand(self, seat: int) -> CardSet:
        """The cards ``seat`` was dealt, without those it drew: what declarations come from."""
        return super().initial_hand(seat) & ~self._drawn[seat]

    def observation(self, seat: int) -> Observation:
        """The base observation, with the draws (public) and the stock's size."""
        return dataclasses.replace(
            super().observation(seat), draws=self.draws(), stock_left=self.stock_left()
        )
