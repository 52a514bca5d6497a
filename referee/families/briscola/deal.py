"""One deal of Briscola: three cards in hand, a stock, a trump suit, no need to follow suit.

The dealer deals one card at a time from the seat after him, three to each seat; the next
card is turned face up and its suit is trump (the briscola). It lies under the stock, so
it is the last card drawn. The seat after the dealer leads the first trick. Any card in
hand may be played: the highest trump takes the trick, else the highest card of the suit
led, in the order A 3 K Q J 7 6 5 4 2. The trick's winner draws first, then the other
seats in seat order, and leads the next trick. Once the stock is empty the hands are
played out. A side with more than half the card points wins the deal; an even split is a
drawn deal.

Only the drawer sees a drawn card, except the face-up trump, which everyone saw. Card
points are ``Rules.card_values`` read as whole points (Tressette reads them as thirds),
in rank order ``3 2 A K Q J 7 6 5 4``: ``10,0,11,4,3,2,0,0,0,0`` holds 120.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Self

from referee.engine.cards import CARD_NAMES, NUM_CARDS, CardSet, cards_of, mask_of
from referee.engine.cloning import clone_state
from referee.engine.codec import Action
from referee.engine.deals import Deal, check_deck, shuffled_deck
from referee.engine.errors import IllegalActionError, Reason
from referee.engine.observation import Observation, Phase
from referee.engine.rules import Rules

HAND_SIZE = 3
"""Cards each seat is dealt, and holds again after each draw while the stock lasts."""
SIDES = 2
"""Two seats each alone, or partners 0+2 against 1+3: two sides either way."""
TRICK_PLACE = (1, 9, 0, 2, 3, 4, 5, 6, 7, 8)
"""Each rank's place in a suit's trick order A 3 K Q J 7 6 5 4 2 (0 the highest), by rank
index ``3 2 A K Q J 7 6 5 4``: the card ids' order is Tressette's, not Briscola's."""
_PLACE = tuple(TRICK_PLACE[card % 10] for card in range(NUM_CARDS))


def beats(card: int, best: int, trump_suit: int) -> bool:
    """Whether ``card`` takes the trick from ``best``, the card winning it so far: a higher
    card of the same suit, or a trump over any other suit."""
    if card // 10 == best // 10:
        return _PLACE[card] < _PLACE[best]
    return card // 10 == trump_suit


def trick_winner(plays: Sequence[tuple[int, int]], trump_suit: int) -> int:
    """The seat that takes a trick of ``(seat, card)`` plays, in playing order: the highest
    trump played, else the highest card of the suit led."""
    best_seat, best = plays[0]
    for seat, card in plays[1:]:
        if beats(card, best, trump_suit):
            best_seat, best = seat, card
    return best_seat


def deal_briscola(rules: Rules, seed: str, number: int, dealer: int) -> Deal:
    """Deal ``number`` of ``seed``: the one way Briscola is dealt.

    The shuffled deck (``shuffled_deck(rules.game, seed, number)``) is dealt one card at a
    time from the seat after ``dealer``, three rounds; the next card is the trump. The
    result's ``stock`` is the rest in draw order, top first, with the trump last; its
    ``last_card`` is the trump and its ``widow`` the stock's cards.
    """
    return _dealt(rules, shuffled_deck(rules.game, seed, number), seed, number, dealer)


def deal_briscola_deck(rules: Rules, deck: Sequence[int], number: int, dealer: int) -> Deal:
    """:func:`deal_briscola` from a given order of the deck (its ``seed`` left empty)."""
    return _dealt(rules, check_deck(deck), "", number, dealer)


def _dealt(rules: Rules, deck: Sequence[int], seed: str, number: int, dealer: int) -> Deal:
    players = rules.players
    dealt = HAND_SIZE * players
    hands = [0] * players
    for i, card in enumerate(deck[:dealt]):
        hands[(dealer + 1 + i) % players] |= 1 << card
    trump = deck[dealt]
    stock = (*deck[dealt + 1 :], trump)
    return Deal(rules.game, seed, number, dealer, tuple(hands), mask_of(stock), trump, stock)


class BriscolaScore(NamedTuple):
    """How a finished deal scored, per side."""

    card_points: tuple[int, ...]
    """Card points each side captured."""
    winner: int | None
    """The side with more than half the card points; None for a drawn deal."""
    points: tuple[int, ...]
    """What the deal adds to each side's game total: 1 to its winner."""


class BriscolaDeal:
    """One deal of Briscola: legal plays, tricks, draws and the score. No I/O, no randomness.

    ``stock`` is the undealt cards in draw order, top first; its last card is the face-up
    trump. ``widow`` and ``trump`` are accepted for the signature the Tressette families'
    deals share, and must agree with the stock.
    """

    __slots__ = (
        "_best",
        "_best_seat",
        "_captured",
        "_dealt",
        "_done",
        "_draws",
        "_hands",
        "_next_draw",
        "_players",
        "_sides",
        "_total",
        "_trick",
        "_tricks",
        "_trump_suit",
        "_turn",
        "_values",
        "dealer",
        "eldest",
        "rules",
        "score",
        "stock",
        "totals",
        "trump",
    )

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
        players = rules.players
        if len(hands) != players:
            raise ValueError(f"{rules.game} needs {players} hands, got {len(hands)}")
        stock = tuple(stock)
        shown = stock[-1] if stock else trump
        if shown is None or not 0 <= shown < NUM_CARDS:
            raise ValueError("a deal needs its stock (the trump last) or, without one, the trump")
        if trump is not None and trump != shown:
            raise ValueError("the trump is the stock's last card, face up under it")
        cards = [*stock, *(c for h in hands for c in cards_of(h))]
        if not all(0 <= c < NUM_CARDS for c in cards) or len(set(cards)) != len(cards):
            raise ValueError("the hands and the stock must hold distinct cards 0..39")
        if len(stock) % players:
            raise ValueError(f"the stock must hold {players} cards for each draw, got {len(stock)}")
        if len({h.bit_count() for h in hands}) != 1 or not hands[0]:
            raise ValueError("every seat must hold the same number of cards, at least one")
        if widow and widow != mask_of(stock):
            raise ValueError("the widow, if given, must be the stock's cards")
        self.rules = rules
        self.dealer = dealer
        self.stock = stock
        """The stock as dealt, in draw order (top first); hidden from the players."""
        self.trump = shown
        """The face-up card whose suit is trump."""
        self.totals = (0,) * SIDES if totals is None else tuple(totals)
        self.score: BriscolaScore | None = None
        self.eldest = (dealer + 1) % players
        """The seat that leads the first trick."""
        self._players = players
        self._sides = tuple(rules.side_of(seat) for seat in range(players))
        self._values = tuple(rules.card_values[card % 10] for card in range(NUM_CARDS))
        self._total = sum(self._values[c] for c in cards)
        self._trump_suit = self.trump // 10
        self._dealt = tuple(hands)
        self._hands = list(hands)
        self._turn = self.eldest
        self._trick: list[tuple[int, Action]] = []
        self._best = -1
        self._best_seat = -1
        self._tricks: list[tuple[tuple[tuple[int, Action], ...], int]] = []
        self._captured = [0] * SIDES
        self._draws: list[tuple[int, int]] = []
        self._next_draw = 0
        self._done = False

    def clone(self) -> Self:
        """A copy to search from: playing on it leaves this deal as it is."""
        return clone_state(self)

    # -- the state API ---------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """Where the deal stands: play, or done."""
        return Phase.DONE if self._done else Phase.PLAY

    @property
    def players(self) -> int:
        """Seats at the table."""
        return self._players

    def current_player(self) -> int | None:
        """Seat to act, or None when the deal is over."""
        return None if self._done else self._turn

    def is_terminal(self) -> bool:
        """Whether the deal is over."""
        return self._done

    def legal_actions(self) -> tuple[Action, ...]:
        """Every card in the hand of the seat to act, by id; empty once the deal is over."""
        return () if self._done else tuple(cards_of(self._hands[self._turn]))

    def apply_action(self, action: Action) -> None:
        """Play the card ``action`` for the seat to act; an illegal action raises
        :class:`IllegalActionError` and changes nothing."""
        refusal = self._refusal(action)
        if refusal is not None:
            raise refusal
        seat = self._turn
        self._hands[seat] ^= 1 << action
        trick = self._trick
        trick.append((seat, action))
        if len(trick) == 1 or beats(action, self._best, self._trump_suit):
            self._best, self._best_seat = action, seat
        if len(trick) < self._players:
            self._turn = (seat + 1) % self._players
        else:
            self._take_trick()

    def explain_refusal(self, action: Action) -> IllegalActionError:
        """Why the seat to act may not take ``action``; ValueError if it may."""
        refusal = self._refusal(action)
        if refusal is None:
            raise ValueError(f"action {action} is legal here")
        return refusal

    def _refusal(self, action: Action) -> IllegalActionError | None:
        if self._done:
            return IllegalActionError(Reason.GAME_OVER, "the deal is over")
        if not 0 <= action < NUM_CARDS:
            return IllegalActionError(
                Reason.UNKNOWN_ACTION, f"action id {action} names no play: a card id is 0..39"
            )
        seat = self._turn
        if not self._hands[seat] >> action & 1:
            return IllegalActionError(
                Reason.CARD_NOT_IN_HAND,
                f"seat {seat} plays {CARD_NAMES[action]}: it is not in seat {seat}'s hand",
            )
        return None

    # -- tricks, draws, the score ------------------------------------------------------------

    def _take_trick(self) -> None:
        winner = self._best_seat
        plays = tuple(self._trick)
        self._tricks.append((plays, winner))
        self._captured[self._sides[winner]] += sum(self._values[card] for _, card in plays)
        self._trick = []
        self._turn = winner
        start = self._next_draw
        if start < len(self.stock):
            for i in range(self._players):
                seat = (winner + i) % self._players
                card = self.stock[start + i]
                self._hands[seat] |= 1 << card
                self._draws.append((seat, card))
            self._next_draw = start + self._players
        if not self._hands[winner]:
            self._finish()

    def _finish(self) -> None:
        points = tuple(self._captured)
        winner = next((side for side, p in enumerate(points) if 2 * p > self._total), None)
        self.score = BriscolaScore(
            points, winner, tuple(int(side == winner) for side in range(SIDES))
        )
        self._done = True

    # -- what seats may see ------------------------------------------------------------------

    def hand(self, seat: int) -> CardSet:
        """A seat's cards in hand."""
        return self._hands[seat]

    def initial_hand(self, seat: int) -> CardSet:
        """The cards ``seat`` was dealt."""
        return self._dealt[seat]

    def drawn(self, seat: int) -> CardSet:
        """The cards ``seat`` has drawn from the stock, played or not."""
        return mask_of(card for s, card in self._draws if s == seat)

    def draws(self) -> tuple[tuple[int, int], ...]:
        """Every card drawn so far, as (seat, card), in order: hidden from the other seats
        but the trump (:meth:`seen_draws`), and written in full in the record."""
        return tuple(self._draws)

    def seen_draws(self, seat: int) -> tuple[tuple[int, int], ...]:
        """The draws ``seat`` saw, as (seat, card): its own, and the face-up trump's."""
        trump = self.trump
        return tuple((s, card) for s, card in self._draws if s == seat or card == trump)

    def stock_left(self) -> int:
        """Cards still in the stock, the trump included (public: everyone can count them)."""
        return len(self.stock) - self._next_draw

    @property
    def plays(self) -> tuple[tuple[int, Action], ...]:
        """Every card played, as (seat, card), in order."""
        return tuple(p for plays, _ in self._tricks for p in plays) + tuple(self._trick)

    @property
    def trick_winners(self) -> tuple[int, ...]:
        """Winning seat of each completed trick."""
        return tuple(winner for _, winner in self._tricks)

    @property
    def tricks_played(self) -> int:
        """Completed tricks."""
        return len(self._tricks)

    @property
    def trick(self) -> tuple[tuple[int, Action], ...]:
        """The trick being played, as (seat, card), in order; empty before its lead."""
        return tuple(self._trick)

    def trick_winning(self) -> tuple[int, int]:
        """The card taking the trick being played so far and its seat, for search;
        ``(-1, -1)`` when nobody has played to it yet."""
        return (self._best, self._best_seat) if self._trick else (-1, -1)

    @property
    def captured(self) -> tuple[int, ...]:
        """Card points each side has captured in completed tricks."""
        return tuple(self._captured)

    def observation(self, seat: int) -> Observation:
        """What ``seat`` may know: its hand, the public history, its own draws and the trump's.

        ``captured`` holds card points (Tressette's holds thirds); there are no declarations.
        """
        to_act = self.current_player()
        return Observation(
            seat=seat,
            dealer=self.dealer,
            phase=self.phase,
            hand=tuple(cards_of(self._hands[seat])),
            current_player=to_act,
            legal_actions=self.legal_actions() if to_act == seat else (),
            trick=tuple(self._trick),
            tricks=tuple(self._tricks),
            declarations=(),
            captured=tuple(self._captured),
            totals=self.totals,
            trump=self.trump,
            draws=self.seen_draws(seat),
            stock_left=self.stock_left(),
        )
