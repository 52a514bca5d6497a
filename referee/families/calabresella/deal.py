"""Calabresella (Terziglio): one deal, from the auction to the payouts (RULES.md §4).

Three active seats, 12 cards each, and a monte of 4. With four at the table the dealer sits
out: he gets no cards, never acts and is paid 0. The active seats, from the eldest (the seat
after the dealer), act in ascending seat order, skipping a dealer who sits out.

==========  =====================================================  ==============
ids         action                                                 text
==========  =====================================================  ==============
0..39       play a card (no signals in Calabresella)               ``3D``
400..405    pass, or bid chiamo … scegliete (``BID_PASS + c``)     ``bid solo``
440..479    chiamo: the soloist calls a card he lacks              ``call AD``
480..519    chiamo: the card the soloist gives for the called one  ``give 4B``
520..559    discard a card face down                               ``discard 4B``
560..575    scegliete: split the monte (``SPLIT_BASE + mask``)     ``split 0101``
==========  =====================================================  ==============

The steps after the auction, and who acts:

- chiamo: the soloist calls a card (CALL). If a defender holds it, he hands it over at once
  and the soloist gives him a card of his own (GIVE; not the called card back). If it is in
  the monte nothing is swapped. Then as in solo.
- solo: the soloist takes the monte into his hand and discards 4, one action each (DISCARD).
- solissimo: no exchange; the monte stays aside.
- dividete: the *first defender* (the active seat after the soloist) receives the two monte
  cards with the lowest ids, the second defender the other two; each sees only his own two.
  Then the first defender discards 2, then the second 2.
- scegliete: the monte is shown to all. The first defender chooses the split: bit ``i`` of
  ``m`` gives the ``i``-th monte card in ascending id order to him, the rest go to the second
  defender (all 16 splits are legal: 4-0, 3-1, 2-2, 1-3, 0-4). The split is public. Then the
  first defender discards as many cards as he took, then the second likewise.

The eldest leads the first trick (seed 004: "El jugador a la derecha del repartidor abre la
primera baza"). The winner of the 12th trick also captures the 4 cards set aside: the monte
in solissimo, the discards otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Self

from referee.engine.cards import CARD_NAMES, NUM_CARDS, SUIT_MASKS, CardSet, cards_of
from referee.engine.cloning import clone_state
from referee.engine.deals import Deal, deal_cards, deal_deck
from referee.engine.rules import Rules
from referee.engine.trick_rules import floored_points, follow_suit_refusal, trick_winner
from referee.families.calabresella.auction import (
    BID_PASS,
    BID_SCEGLIETE,
    Auction,
    CalabresellaError,
    CalabresellaReason,
    Contract,
    bid_name,
    is_bid,
)

Action = int

CALL_BASE: Action = 440
"""``CALL_BASE + card``: chiamo, the soloist names a card he lacks."""
GIVE_BASE: Action = 480
"""``GIVE_BASE + card``: chiamo, the card the soloist gives the called card's holder."""
DISCARD_BASE: Action = 520
"""``DISCARD_BASE + card``: discard a card face down."""
SPLIT_BASE: Action = 560
"""``SPLIT_BASE + mask`` (mask 0..15): scegliete, the monte cards the first defender takes."""

GAME = "calabresella"
"""The game name the deal generator hashes."""

HAND_SIZE = 12
TRICKS = 12
HANDS = 3
"""Hands dealt: three of 12, whatever the table; with four at the table the dealer sits out."""
CAPPOTTO_MULTIPLIERS = {"none": 1, "double": 2}
"""The ``cappotto`` knob in Calabresella: what one side winning every trick multiplies."""
SOLOIST, DEFENDERS = 0, 1
"""Side indices in ``captured`` and ``thirds``."""


class Phase(IntEnum):
    """Where a deal stands."""

    AUCTION = 0
    CALL = 1
    """Chiamo: the soloist calls a card."""
    GIVE = 2
    """Chiamo: the soloist gives a card to the called card's holder."""
    DISCARD = 3
    """Someone discards face down, one card per action."""
    SPLIT = 4
    """Scegliete: the first defender splits the shown monte."""
    PLAY = 5
    OVER = 6
    """Scored, or redealt after all passed."""


def deal_calabresella(rules: Rules, seed: str, number: int, dealer: int) -> Deal:
    """Deal ``number`` of ``seed``: three hands of 12 from the eldest, the 4 left the monte
    (the ``widow`` of the result). The one way Calabresella is dealt: games, ``tavolo
    deal`` and the tests all come here.

    The generator deals three hands from the seat after its dealer; with dealer 2 of 3 its
    first hand is the eldest's. The eldest is the seat after the table's dealer, and with
    four at the table the dealer gets no cards.
    """
    return _seated(rules, deal_cards(GAME, seed, number, HANDS - 1, HANDS), dealer)


def deal_calabresella_deck(rules: Rules, deck: Sequence[int], number: int, dealer: int) -> Deal:
    """:func:`deal_calabresella` from a given order of the deck (its ``seed`` left empty)."""
    return _seated(rules, deal_deck(GAME, deck, number, HANDS - 1, HANDS), dealer)


def _seated(rules: Rules, dealt: Deal, dealer: int) -> Deal:
    """``dealt``'s three hands given to the active seats from the one after ``dealer``."""
    hands = [0] * rules.players
    for i in range(HANDS):
        hands[(dealer + 1 + i) % rules.players] = dealt.hands[i]
    return dealt._replace(dealer=dealer, hands=tuple(hands))


def call_action(card: int) -> Action:
    """Chiamo: call ``card``."""
    return CALL_BASE + card


def give_action(card: int) -> Action:
    """Chiamo: give ``card`` to the called card's holder."""
    return GIVE_BASE + card


def discard_action(card: int) -> Action:
    """Discard ``card`` face down."""
    return DISCARD_BASE + card


def split_action(mask: int) -> Action:
    """Scegliete: take the monte cards of ``mask`` (bit i = i-th monte card by id)."""
    return SPLIT_BASE + mask


def action_name(action: Action) -> str:
    """Text of a Calabresella action, e.g. ``"call AD"``; ValueError for an unknown id."""
    if 0 <= action < NUM_CARDS:
        return CARD_NAMES[action]
    if is_bid(action):
        return bid_name(action)
    for base, word in ((CALL_BASE, "call"), (GIVE_BASE, "give"), (DISCARD_BASE, "discard")):
        if base <= action < base + NUM_CARDS:
            return f"{word} {CARD_NAMES[action - base]}"
    if SPLIT_BASE <= action < SPLIT_BASE + 16:
        return f"split {action - SPLIT_BASE:04b}"
    raise ValueError(f"action id {action} names no Calabresella action")


@dataclass(frozen=True)
class CalabresellaScore:
    """How a finished deal scored."""

    redeal: bool
    """All passed: nobody played, nobody is paid, the same dealer deals again."""
    contract: Contract | None
    soloist: int | None
    value: int
    """What each defender pays or receives: contract points × cappotto or stramazzo."""
    soloist_points: int
    """The soloist's floored points, the last trick included."""
    success: bool
    """The soloist took at least 6 points."""
    cappotto: bool
    """One side won every trick."""
    stramazzo: bool
    """The knob is on and one side took every card point without every trick."""
    thirds: tuple[int, int]
    """Card thirds (soloist, defenders), set-aside cards and the last trick's 3 included."""
    last_trick: int | None
    """Seat that won the last trick."""
    payouts: tuple[int, ...]
    """Game points per seat: +2·value, −value, −value on success, the reverse on failure."""


@dataclass(frozen=True)
class CalabresellaObservation:
    """Exactly what one seat may know of a deal in progress."""

    seat: int
    dealer: int
    seats: int
    phase: Phase
    hand: tuple[int, ...]
    """The seat's own cards now."""
    current_player: int | None
    legal_actions: tuple[Action, ...]
    """The seat's legal actions when it is to act, else empty."""
    bids: tuple[tuple[int, Action], ...]
    """The auction so far: (seat, bid)."""
    contract: Contract | None
    soloist: int | None
    called: int | None
    """Chiamo: the called card (said aloud)."""
    called_holder: int | None
    """Chiamo: the seat that handed the called card over (seen by all); None if not yet."""
    called_in_monte: bool | None
    """Chiamo: whether the called card was in the monte (no swap); None before the call."""
    received: tuple[int, ...]
    """Cards this seat was handed face down by another player (chiamo swap)."""
    given: tuple[int, ...]
    """Cards this seat handed face down to another player (chiamo swap)."""
    monte: tuple[int, ...]
    """The monte cards this seat has been shown: all (scegliete; the soloist in chiamo and
    solo once he takes it), its own two (dividete), else none."""
    split: int | None
    """Scegliete: the first defender's split mask, once made (public)."""
    discards: tuple[int, ...]
    """This seat's own discards."""
    trick: tuple[tuple[int, int], ...]
    """The current trick so far: (seat, card)."""
    tricks: tuple[tuple[tuple[tuple[int, int], ...], int], ...]
    """Completed tricks: their plays and the winning seat."""
    captured: tuple[int, int]
    """Card thirds captured in completed tricks: (soloist, defenders)."""
    score: CalabresellaScore | None


class CalabresellaDeal:
    """One deal: legal actions, applying them, scoring. No I/O, no randomness."""

    def clone(self) -> Self:
        """A copy to search from: playing on it leaves this deal as it is."""
        return clone_state(self)

    def __init__(self, rules: Rules, hands: Sequence[CardSet], dealer: int, monte: CardSet) -> None:
        """``hands`` has one set per seat (the dealer's empty when four are at the table).

        The rules give the table's size (``table_seats``), ``stramazzo``, what winning every
        trick multiplies (``cappotto``) and the cards' values (``card_values``).
        """
        seats = rules.players
        if seats not in (3, 4):
            raise ValueError(f"calabresella is played by 3 or 4 at the table, not {seats}")
        if len(hands) != seats:
            raise ValueError(f"{seats} seats need {seats} hands, got {len(hands)}")
        if not 0 <= dealer < seats:
            raise ValueError(f"dealer {dealer} is not a seat of {seats}")
        if rules.cappotto not in CAPPOTTO_MULTIPLIERS:
            raise ValueError(f"calabresella's cappotto is none or double, not {rules.cappotto!r}")
        stramazzo = rules.stramazzo
        cappotto_multiplier = CAPPOTTO_MULTIPLIERS[rules.cappotto]
        card_values = rules.card_values
        self.seats = seats
        self.dealer = dealer
        self.order = tuple((dealer + 1 + i) % seats for i in range(3))
        """The active seats, the eldest first."""
        self.eldest = self.order[0]
        self._check_cards(hands, monte)
        self.monte = monte
        self.stramazzo = stramazzo
        self.cappotto_multiplier = cappotto_multiplier
        self._values = tuple(card_values[c % 10] for c in range(NUM_CARDS))
        self._hands = list(hands)
        self._dealt = tuple(hands)
        self.auction = Auction(self.order, once=rules.auction == "once")
        self.contract: Contract | None = None
        self.soloist: int | None = None
        self.defenders: tuple[int, int] | None = None
        """(first, second) defender: the active seats after the soloist, in order."""
        self.called: int | None = None
        self.called_holder: int | None = None
        self.called_in_monte: bool | None = None
        self.split: int | None = None
        self.set_aside: CardSet = 0
        """The 4 cards that go to the last trick's winner, once known."""
        self.score: CalabresellaScore | None = None
        self._phase = Phase.AUCTION
        self._turn = self.eldest
        self._seen_monte = [0] * seats
        self._received = [0] * seats
        self._given = [0] * seats
        self._discards = [0] * seats
        self._discard_queue: list[int] = []
        self._trick: list[tuple[int, int]] = []
        self._tricks: list[tuple[tuple[tuple[int, int], ...], int]] = []
        self._captured = [0, 0]
        self._tricks_won = [0, 0]

    def _check_cards(self, hands: Sequence[CardSet], monte: CardSet) -> None:
        seen = monte
        if monte.bit_count() != 4:
            raise ValueError(f"the monte must hold 4 cards, not {monte.bit_count()}")
        for seat, hand in enumerate(hands):
            want = HAND_SIZE if seat in self.order else 0
            if hand.bit_count() != want:
                raise ValueError(f"seat {seat} must hold {want} cards, not {hand.bit_count()}")
            if hand & seen:
                raise ValueError(f"seat {seat} holds cards dealt elsewhere")
            seen |= hand
        if seen != (1 << NUM_CARDS) - 1:
            raise ValueError("the hands and the monte must make up the 40-card deck")

    @classmethod
    def from_seed(cls, rules: Rules, seed: str, number: int, dealer: int) -> CalabresellaDeal:
        """Deal ``number`` of ``seed``, as a game deals it (:func:`deal_calabresella`)."""
        dealt = deal_calabresella(rules, seed, number, dealer)
        return cls(rules, dealt.hands, dealer, dealt.widow)

    # -- the state API ---------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """Where the deal stands."""
        return self._phase

    def current_player(self) -> int | None:
        """Seat to act, or None when the deal is over."""
        return None if self._phase is Phase.OVER else self._turn

    def is_terminal(self) -> bool:
        """Whether the deal is over (scored or redealt)."""
        return self._phase is Phase.OVER

    def hand(self, seat: int) -> CardSet:
        """A seat's cards now."""
        return self._hands[seat]

    def dealt_hand(self, seat: int) -> CardSet:
        """The cards ``seat`` was dealt."""
        return self._dealt[seat]

    def discards(self, seat: int) -> CardSet:
        """A seat's discards."""
        return self._discards[seat]

    @property
    def tricks(self) -> tuple[tuple[tuple[tuple[int, int], ...], int], ...]:
        """Completed tricks: ((seat, card), …) and the winner."""
        return tuple(self._tricks)

    @property
    def trick(self) -> tuple[tuple[int, int], ...]:
        """The trick being played: ((seat, card), …), empty before its first card."""
        return tuple(self._trick)

    @property
    def captured(self) -> tuple[int, int]:
        """Card thirds captured in completed tricks: (soloist, defenders)."""
        return self._captured[0], self._captured[1]

    def legal_actions(self) -> tuple[Action, ...]:
        """Every action the seat to act may take, ascending; empty once the deal is over."""
        phase = self._phase
        hand = self._hands[self._turn]
        if phase is Phase.PLAY:
            if self._trick:
                led = SUIT_MASKS[self._trick[0][1] // 10]
                if hand & led:
                    hand &= led
            return tuple(cards_of(hand))
        if phase is Phase.DISCARD:
            return tuple(DISCARD_BASE + c for c in cards_of(hand))
        if phase is Phase.AUCTION:
            return self.auction.legal_bids()
        if phase is Phase.CALL:
            return tuple(CALL_BASE + c for c in range(NUM_CARDS) if not hand >> c & 1)
        if phase is Phase.GIVE:
            assert self.called is not None
            return tuple(GIVE_BASE + c for c in cards_of(hand & ~(1 << self.called)))
        if phase is Phase.SPLIT:
            return tuple(range(SPLIT_BASE, SPLIT_BASE + 16))
        return ()

    def explain_refusal(self, action: Action) -> CalabresellaError:
        """Why the seat to act may not take ``action``, without applying it; ValueError if legal."""
        error = self._refusal(action)
        if error is None:
            raise ValueError(f"{action_name(action)} is legal here")
        return error

    def apply_action(self, action: Action) -> None:
        """Apply the action of the seat to act; raise :class:`CalabresellaError` if illegal."""
        error = self._refusal(action)
        if error is not None:
            raise error
        phase = self._phase
        seat = self._turn
        if phase is Phase.PLAY:
            self._play(seat, action)
        elif phase is Phase.DISCARD:
            self._discard(seat, action - DISCARD_BASE)
        elif phase is Phase.AUCTION:
            self.auction.apply(action)
            self._after_bid()
        elif phase is Phase.CALL:
            self._call(seat, action - CALL_BASE)
        elif phase is Phase.GIVE:
            self._give(seat, action - GIVE_BASE)
        else:
            self._split(action - SPLIT_BASE)

    # -- refusals ----------------------------------------------------------------------

    def _refusal(self, action: Action) -> CalabresellaError | None:
        phase = self._phase
        if phase is Phase.OVER:
            return CalabresellaError(CalabresellaReason.GAME_OVER, "the deal is over")
        if action in self.legal_actions():
            return None
        seat = self._turn
        try:
            name = action_name(action)
        except ValueError:
            return CalabresellaError(
                CalabresellaReason.UNKNOWN_ACTION,
                f"seat {seat}: action id {action} names no Calabresella action",
            )
        what = f"seat {seat}: {name}"
        if phase is Phase.AUCTION and is_bid(action):
            return self.auction.refusal(action)
        expected = {
            Phase.AUCTION: (BID_PASS, BID_SCEGLIETE + 1),
            Phase.CALL: (CALL_BASE, CALL_BASE + NUM_CARDS),
            Phase.GIVE: (GIVE_BASE, GIVE_BASE + NUM_CARDS),
            Phase.DISCARD: (DISCARD_BASE, DISCARD_BASE + NUM_CARDS),
            Phase.SPLIT: (SPLIT_BASE, SPLIT_BASE + 16),
            Phase.PLAY: (0, NUM_CARDS),
        }
        low, high = expected[phase]
        if not low <= action < high:
            return CalabresellaError(
                CalabresellaReason.WRONG_PHASE,
                f"{what}: not now, the deal is at the {phase.name.lower()} step",
            )
        card = action - low
        hand = self._hands[seat]
        if phase is Phase.CALL:
            return CalabresellaError(
                CalabresellaReason.CALLED_CARD_HELD,
                f"{what}: the soloist must call a card he lacks, and holds {CARD_NAMES[card]}",
            )
        if phase is Phase.GIVE and card == self.called:
            return CalabresellaError(
                CalabresellaReason.GIVE_CALLED_CARD,
                f"{what}: the soloist may not give back the called card {CARD_NAMES[card]}",
            )
        if not hand >> card & 1:
            return CalabresellaError(
                CalabresellaReason.CARD_NOT_IN_HAND,
                f"{what}: {CARD_NAMES[card]} is not in seat {seat}'s hand",
            )
        led = self._trick[0][1] // 10
        return CalabresellaError(
            CalabresellaReason.MUST_FOLLOW_SUIT, follow_suit_refusal(what, led)
        )

    # -- the steps -----------------------------------------------------------------------

    def _after_bid(self) -> None:
        auction = self.auction
        if not auction.is_over:
            turn = auction.current_player()
            assert turn is not None
            self._turn = turn
            return
        won = auction.winner
        if won is None:
            self._phase = Phase.OVER
            self.score = CalabresellaScore(
                redeal=True,
                contract=None,
                soloist=None,
                value=0,
                soloist_points=0,
                success=False,
                cappotto=False,
                stramazzo=False,
                thirds=(0, 0),
                last_trick=None,
                payouts=(0,) * self.seats,
            )
            return
        soloist, contract = won
        self.soloist, self.contract = soloist, contract
        at = self.order.index(soloist)
        first, second = self.order[(at + 1) % 3], self.order[(at + 2) % 3]
        self.defenders = (first, second)
        monte = cards_of(self.monte)
        if contract is Contract.CHIAMO:
            self._phase = Phase.CALL
            self._turn = soloist
        elif contract is Contract.SOLO:
            self._take_monte(soloist)
        elif contract is Contract.SOLISSIMO:
            self.set_aside = self.monte
            self._start_play()
        elif contract is Contract.DIVIDETE:
            for seat, part in ((first, monte[:2]), (second, monte[2:])):
                cards = sum(1 << c for c in part)
                self._hands[seat] |= cards
                self._seen_monte[seat] = cards
            self._start_discards([first, first, second, second])
        else:
            for seat in self.order:
                self._seen_monte[seat] = self.monte
            self._phase = Phase.SPLIT
            self._turn = first

    def _call(self, soloist: int, card: int) -> None:
        self.called = card
        holder = next((s for s in self.order if self._hands[s] >> card & 1), None)
        self.called_in_monte = holder is None
        if holder is None:
            self._take_monte(soloist)
            return
        self.called_holder = holder
        self._hands[holder] ^= 1 << card
        self._hands[soloist] |= 1 << card
        self._received[soloist] |= 1 << card
        self._given[holder] |= 1 << card
        self._phase = Phase.GIVE

    def _give(self, soloist: int, card: int) -> None:
        holder = self.called_holder
        assert holder is not None
        self._hands[soloist] ^= 1 << card
        self._hands[holder] |= 1 << card
        self._given[soloist] |= 1 << card
        self._received[holder] |= 1 << card
        self._take_monte(soloist)

    def _take_monte(self, soloist: int) -> None:
        self._hands[soloist] |= self.monte
        self._seen_monte[soloist] = self.monte
        self._start_discards([soloist] * 4)

    def _split(self, mask: int) -> None:
        assert self.defenders is not None
        first, second = self.defenders
        monte = cards_of(self.monte)
        taken = sum(1 << c for i, c in enumerate(monte) if mask >> i & 1)
        self.split = mask
        self._hands[first] |= taken
        self._hands[second] |= self.monte & ~taken
        count = taken.bit_count()
        self._start_discards([first] * count + [second] * (4 - count))

    def _start_discards(self, queue: list[int]) -> None:
        self._discard_queue = queue
        self._phase = Phase.DISCARD
        self._turn = queue[0]

    def _discard(self, seat: int, card: int) -> None:
        self._hands[seat] ^= 1 << card
        self._discards[seat] |= 1 << card
        self.set_aside |= 1 << card
        self._discard_queue.pop(0)
        if self._discard_queue:
            self._turn = self._discard_queue[0]
        else:
            self._start_play()

    def _start_play(self) -> None:
        self._phase = Phase.PLAY
        self._turn = self.eldest

    def _side(self, seat: int) -> int:
        return SOLOIST if seat == self.soloist else DEFENDERS

    def _play(self, seat: int, card: int) -> None:
        self._hands[seat] ^= 1 << card
        self._trick.append((seat, card))
        if len(self._trick) < 3:
            self._turn = self.order[(self.order.index(seat) + 1) % 3]
            return
        winner = trick_winner(self._trick)
        side = self._side(winner)
        self._captured[side] += sum(self._values[c] for _, c in self._trick)
        self._tricks_won[side] += 1
        self._tricks.append((tuple(self._trick), winner))
        self._trick = []
        self._turn = winner
        if len(self._tricks) == TRICKS:
            self._finish(winner)

    # -- scoring -----------------------------------------------------------------------

    def _finish(self, last: int) -> None:
        contract, soloist = self.contract, self.soloist
        assert contract is not None and soloist is not None and self.defenders is not None
        cards = list(self._captured)
        cards[self._side(last)] += sum(self._values[c] for c in cards_of(self.set_aside))
        thirds = list(cards)
        thirds[self._side(last)] += 3
        points = floored_points(thirds[SOLOIST])
        success = points >= 6
        cappotto = TRICKS in self._tricks_won
        all_points = sum(self._values)
        stramazzo = self.stramazzo and not cappotto and all_points > 0 and all_points in cards
        multiplier = self.cappotto_multiplier if cappotto else 3 if stramazzo else 1
        value = contract.game_points * multiplier
        sign = 1 if success else -1
        payouts = [0] * self.seats
        payouts[soloist] = 2 * value * sign
        for seat in self.defenders:
            payouts[seat] = -value * sign
        self.score = CalabresellaScore(
            redeal=False,
            contract=contract,
            soloist=soloist,
            value=value,
            soloist_points=points,
            success=success,
            cappotto=cappotto,
            stramazzo=stramazzo,
            thirds=(thirds[0], thirds[1]),
            last_trick=last,
            payouts=tuple(payouts),
        )
        self._phase = Phase.OVER

    # -- what seats may see --------------------------------------------------------------

    def observation(self, seat: int) -> CalabresellaObservation:
        """What ``seat`` may know: its own cards and steps, and the public history."""
        to_act = self.current_player()
        return CalabresellaObservation(
            seat=seat,
            dealer=self.dealer,
            seats=self.seats,
            phase=self._phase,
            hand=tuple(cards_of(self._hands[seat])),
            current_player=to_act,
            legal_actions=self.legal_actions() if to_act == seat else (),
            bids=tuple(self.auction.bids),
            contract=self.contract,
            soloist=self.soloist,
            called=self.called,
            called_holder=self.called_holder,
            called_in_monte=self.called_in_monte,
            received=tuple(cards_of(self._received[seat])),
            given=tuple(cards_of(self._given[seat])),
            monte=tuple(cards_of(self._seen_monte[seat])),
            split=self.split,
            discards=tuple(cards_of(self._discards[seat])),
            trick=tuple(self._trick),
            tricks=tuple(self._tricks),
            captured=self.captured,
            score=self.score,
        )
