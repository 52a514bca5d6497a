"""Tressette: one deal, played out under a :class:`~referee.engine.rules.Rules`.

Four seats in two sides (0+2, 1+3), or, for tressette a tre, three seats each alone
(see :mod:`referee.families.tressette.a_tre_deal`). The hot path (``legal_actions`` and
``apply_action``) works on bitmask hands and precomputed action tables, because
search bots live on its speed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple, Self

from referee.engine.cards import CARD_NAMES, SUIT_MASKS, SUIT_NAMES, CardSet, cards_of
from referee.engine.cloning import clone_state
from referee.engine.codec import Action
from referee.engine.errors import IllegalActionError, Reason
from referee.engine.observation import Observation, Phase
from referee.engine.rules import Rules
from referee.engine.trick_rules import floored_points, follow_suit_refusal
from referee.families.tressette.actions import (
    CALL_OUT,
    DECLARE_BASE,
    END_DECLARATIONS,
    NUM_PLAY_ACTIONS,
    SIGNAL_NAMES,
    Signal,
    action_name,
    is_declaration,
)
from referee.families.tressette.declarations import (
    DECLARATION_NAMES,
    HELD,
    declaration_points,
    honours_key,
)

_HELD_ACTIONS = tuple(tuple(DECLARE_BASE + d for d in held) for held in HELD)
_DECLARE, _PLAY, _DONE = int(Phase.DECLARE), int(Phase.PLAY), int(Phase.DONE)
_PHASES = tuple(Phase)
_HONOURS = 0b111  # the 3, 2 and ace in a 10-bit suit pattern
_POPCOUNT = tuple(bin(p).count("1") for p in range(1024))


def _true_signals(rules: Rules, rest: int, leading: bool) -> list[Signal]:
    """Signals a player may truthfully give when ``rest`` is what they keep of the suit."""
    out: list[Signal] = []
    if leading:
        out.append(Signal.BUSSO)
        if rules.ribusso:
            out.append(Signal.RIBUSSO)
    if rest == 0:
        out.append(Signal.VOLO)
    elif rules.striscio_meaning == "more" or not rest & _HONOURS:
        if rules.striscio_lengths:
            more = _POPCOUNT[rest]
            if more >= 4:
                out.append(Signal.STRISCIO_LUNGO)
            elif more == 3 or rules.striscio_corto == "one_to_three":
                out.append(Signal.STRISCIO_CORTO)
        else:
            out.append(Signal.STRISCIO)
    return out


_Table = tuple[tuple[tuple[Action, ...], ...], ...]
_SetTable = tuple[tuple[frozenset[Action], ...], ...]


def _table(rules: Rules, with_signals: bool, leading: bool) -> _Table:
    """``table[suit][pattern]``: the plays of that suit's cards when the hand holds ``pattern``."""
    suits = []
    for suit in range(4):
        by_pattern = []
        for pattern in range(1024):
            acts: list[Action] = []
            for rank in range(10):
                if pattern >> rank & 1:
                    card = suit * 10 + rank
                    acts.append(card)
                    if with_signals:
                        rest = pattern & ~(1 << rank)
                        acts.extend(s * 40 + card for s in _true_signals(rules, rest, leading))
            by_pattern.append(tuple(acts))
        suits.append(tuple(by_pattern))
    return tuple(suits)


@dataclass(frozen=True)
class RulesTables:
    """What the hot path needs of one :class:`Rules`, computed once per rule set."""

    first_lead: _Table
    """Plays when leading the first trick."""
    lead: _Table
    """Plays when leading a later trick."""
    follow: _Table
    """Plays when not leading."""
    first_lead_set: _SetTable
    lead_set: _SetTable
    follow_set: _SetTable
    values: tuple[int, ...]
    """Card thirds by card id."""
    sides: tuple[int, ...]
    """Side of each seat."""
    players: int
    next_seat: tuple[int, ...]
    """The seat after each seat."""
    zeros: tuple[int, ...]
    """A zero per side."""

    @property
    def no_pending(self) -> list[tuple[Action, ...]]:
        """No declarations open, for each seat."""
        return [()] * self.players


def _sets(table: _Table) -> _SetTable:
    return tuple(tuple(frozenset(acts) for acts in suit) for suit in table)


@cache
def _signal_tables(
    signals: str, striscio_meaning: str, striscio_lengths: bool, striscio_corto: str, ribusso: bool
) -> tuple[_Table, _Table, _Table, _SetTable, _SetTable, _SetTable]:
    first, lead, follow = _plain_tables(
        signals, striscio_meaning, striscio_lengths, striscio_corto, ribusso
    )
    return first, lead, follow, _sets(first), _sets(lead), _sets(follow)


def _plain_tables(
    signals: str, striscio_meaning: str, striscio_lengths: bool, striscio_corto: str, ribusso: bool
) -> tuple[_Table, _Table, _Table]:
    rules = Rules(
        signals=signals,
        striscio_meaning=striscio_meaning,
        striscio_lengths=striscio_lengths,
        striscio_corto=striscio_corto,
        ribusso=ribusso,
    )
    plain = _table(rules, False, False)
    if signals == "muto":
        return plain, plain, plain
    if signals == "leader":
        return plain, _table(rules, True, True), plain
    lead = _table(rules, True, True)
    return lead, lead, _table(rules, True, False)


_BY_ID: dict[int, tuple[Rules, RulesTables]] = {}


def rules_tables(rules: Rules) -> RulesTables:
    """The tables of a rule set; looked up by identity, since hashing ``Rules`` is slow."""
    entry = _BY_ID.get(id(rules))
    if entry is not None and entry[0] is rules:
        return entry[1]
    tables = RulesTables(
        *_signal_tables(
            rules.signals,
            rules.striscio_meaning,
            rules.striscio_lengths,
            rules.striscio_corto,
            rules.ribusso,
        ),
        tuple(rules.card_values[c % 10] for c in range(40)),
        tuple(rules.side_of(s) for s in range(rules.players)),
        rules.players,
        tuple((s + 1) % rules.players for s in range(rules.players)),
        (0,) * rules.sides,
    )
    if len(_BY_ID) > 256:  # rule sets made on the fly must not grow this forever
        _BY_ID.clear()
    _BY_ID[id(rules)] = (rules, tables)
    return tables


class DealScore(NamedTuple):
    """How a finished deal scored, per side."""

    thirds: tuple[int, ...]
    """Card thirds captured, with the last trick (and the widow) included."""
    card_points: tuple[int, ...]
    """Floored card points, after any cappotto rule."""
    declarations: tuple[int, ...]
    """Declared points that count, after any cappotto rule."""
    points: tuple[int, ...]
    """What the deal adds to each side's game total."""
    last_trick: int
    """Seat that won the last trick."""
    cappotto: int | None
    """Side that won every trick, if one did."""


def score_deal(
    rules: Rules,
    captured: Sequence[int],
    tricks_won: Sequence[int],
    declared: Sequence[int],
    last_trick: int,
) -> DealScore:
    """Score a played-out deal from each side's captured card thirds, tricks and declarations.

    Each side's thirds, with 3 more for the last trick, are floored to points; then the
    cappotto knobs apply to a side that won every trick.
    """
    last_side = rules.side_of(last_trick)
    thirds = list(captured)
    thirds[last_side] += 3
    card_points = [floored_points(t) for t in thirds]
    counted = list(declared)
    total_tricks = sum(tricks_won)
    cappotto = next((s for s, won in enumerate(tricks_won) if won == total_tricks), None)
    multiplier = 1
    if cappotto is not None and rules.cappotto != "none":
        if rules.cappotto_cancels_declarations:
            counted = [d if s == cappotto else 0 for s, d in enumerate(counted)]
        if rules.cappotto == "fixed":
            card_points[cappotto] += 1
        else:
            multiplier = 2
    points = tuple((c + d) * multiplier for c, d in zip(card_points, counted, strict=True))
    return DealScore(
        tuple(thirds), tuple(card_points), tuple(counted), points, last_trick, cappotto
    )


@dataclass(frozen=True)
class CallOut:
    """A claim to have reached the target (chiamarsi fuori), as the referee checked it."""

    seat: int
    claimed: int
    """The side's game total plus this deal's floored captured points and declarations."""
    correct: bool


FOUR_OF_DENARI = 9
"""The card id of the 4 of denari (``4D``), which leads with ``first_lead = four_of_denari``."""


class TressetteDeal:
    """One deal: legal actions, applying them, scoring. No I/O, no randomness."""

    __slots__ = (
        "_best",
        "_best_seat",
        "_best_shift",
        "_call_out_allowed",
        "_captured",
        "_declared",
        "_declared_points",
        "_done_tricks",
        "_follow",
        "_follow_set",
        "_hands",
        "_lead",
        "_lead_set",
        "_led_follow",
        "_led_follow_set",
        "_led_shift",
        "_n_in_trick",
        "_next_seat",
        "_pending",
        "_phase",
        "_players",
        "_plays",
        "_seated_plays",
        "_sides",
        "_tables",
        "_trick",
        "_trick_thirds",
        "_tricks_won",
        "_trump_shift",
        "_turn",
        "_values",
        "_winners",
        "call_out",
        "dealer",
        "eldest",
        "rules",
        "score",
        "totals",
        "trump",
        "widow",
    )

    def clone(self) -> Self:
        """A copy to search from: playing on it leaves this deal as it is."""
        return clone_state(self)

    def __init__(
        self,
        rules: Rules,
        hands: Sequence[CardSet],
        dealer: int,
        *,
        widow: CardSet = 0,
        totals: Sequence[int] | None = None,
        trump: int | None = None,
        stock: Sequence[int] = (),
    ) -> None:
        if stock:
            raise ValueError(f"{rules.game} has no stock to draw from (tressette a due has)")
        tables = rules_tables(rules)
        players = tables.players
        if len(hands) != players:
            raise ValueError(f"{rules.game} needs {players} hands, got {len(hands)}")
        self.rules = rules
        self.dealer = dealer
        self.widow = widow
        self.totals = tables.zeros if totals is None else tuple(totals)
        self.score: DealScore | None = None
        self.call_out: CallOut | None = None
        self._tables = tables
        self._call_out_allowed = rules.call_out
        self._players = players
        self._sides = tables.sides
        self._values = tables.values
        self._hands = list(hands)
        self._lead, self._lead_set = tables.first_lead, tables.first_lead_set
        self._follow, self._follow_set = tables.follow, tables.follow_set
        self._captured = list(tables.zeros)
        self._tricks_won = list(tables.zeros)
        self._declared_points = list(tables.zeros)
        self._declared: list[tuple[int, int]] = []
        self._winners: list[int] = []
        self._plays: list[Action] = []
        self._seated_plays: list[tuple[int, Action]] = []
        self._done_tricks: tuple[tuple[tuple[tuple[int, Action], ...], int], ...] = ()
        self._trick = 0
        self._n_in_trick = 0
        self._led_shift = 0
        self._led_follow = tables.follow[0]
        self._led_follow_set = tables.follow_set[0]
        self._next_seat = tables.next_seat
        self._best = -1
        self._best_seat = -1
        self._best_shift = 0
        self.trump = trump
        """The shown card whose suit is trump (briscola), or None."""
        # The trump suit's first card id; -1 matches no card, so without a trump it costs
        # one comparison on plays that do not beat the best card of their own suit.
        self._trump_shift = -1 if trump is None else trump // 10 * 10
        self._trick_thirds = 0
        eldest = dealer + 1 if dealer + 1 < players else 0
        if rules.first_lead == "four_of_denari":
            # The holder of the 4 of denari acts first, and leads: every card is dealt.
            eldest = next(s for s, h in enumerate(hands) if h >> FOUR_OF_DENARI & 1)
        self.eldest = eldest
        """The seat that acts first in this deal (declares first, and leads the first trick)."""
        self._turn = eldest
        self._phase = _PLAY
        self._pending: list[tuple[Action, ...]] = tables.no_pending
        if rules.declarations:
            held = [
                _HELD_ACTIONS[(h & 7) | (h >> 7 & 0x38) | (h >> 14 & 0x1C0) | (h >> 21 & 0xE00)]
                for h in hands
            ]
            if rules.auto_declare:
                for i in range(players):
                    seat = (eldest + i) % players
                    self._auto_declare(seat, held[seat])
            elif any(held):
                self._pending = held
                if rules.declare_before_first_card:
                    self._phase = _DECLARE
                    self._next_declarer(eldest)

    # -- the state API ---------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """Where the deal stands."""
        return _PHASES[self._phase]

    @property
    def players(self) -> int:
        """Seats at the table."""
        return self._players

    def current_player(self) -> int | None:
        """Seat to act, or None when the deal is over."""
        return None if self._phase == _DONE else self._turn

    def is_terminal(self) -> bool:
        """Whether the deal is over."""
        return self._phase == _DONE

    def hand(self, seat: int) -> CardSet:
        """A seat's unplayed cards."""
        return self._hands[seat]

    def legal_actions(self) -> tuple[Action, ...]:
        """Every action the seat to act may take, in a fixed order; empty once the deal is over."""
        hand = self._hands[self._turn]
        if self._n_in_trick:  # following: the phase is PLAY
            pattern = (hand >> self._led_shift) & 1023
            if pattern:
                acts = self._led_follow[pattern]
            else:
                t = self._follow
                acts = t[0][hand & 1023] + t[1][(hand >> 10) & 1023] + t[2][(hand >> 20) & 1023]
                acts += t[3][hand >> 30]
        elif self._phase == _PLAY:
            t = self._lead
            acts = t[0][hand & 1023] + t[1][(hand >> 10) & 1023] + t[2][(hand >> 20) & 1023]
            acts += t[3][hand >> 30]
            if self._call_out_allowed:
                acts += (CALL_OUT,)
        elif self._phase == _DONE:
            return ()
        else:
            return (*self._pending[self._turn], END_DECLARATIONS)
        # In trick 1 the seat to act has not played yet, so its declarations are still open.
        if self._trick == 0 and self._pending[self._turn]:
            return self._pending[self._turn] + acts
        return acts

    def apply_action(self, action: Action) -> None:
        """Apply the action of the seat to act; raise :class:`IllegalActionError` if illegal."""
        seat = self._turn
        hand = self._hands[seat]
        card = action % 40
        n = self._n_in_trick
        if n:  # following: the phase is PLAY
            shift = self._led_shift
            pattern = (hand >> shift) & 1023
            if pattern:
                if action not in self._led_follow_set[pattern]:
                    self._refuse(seat, action)
                    return
            elif action not in self._follow_set[card // 10][(hand >> (card // 10 * 10)) & 1023]:
                self._refuse(seat, action)
                return
            self._hands[seat] = hand ^ (1 << card)
            self._plays.append(action)
            # The best card's suit has ids best_shift..+9, the stronger the lower; a trump
            # beats any card of another suit.
            best_shift = self._best_shift
            if best_shift <= card < self._best:
                self._best = card
                self._best_seat = seat
            elif card - card % 10 == self._trump_shift != best_shift:
                self._best = card
                self._best_seat = seat
                self._best_shift = self._trump_shift
            self._trick_thirds += self._values[card]
            n += 1
            if n < self._players:
                self._n_in_trick = n
                self._turn = self._next_seat[seat]
                return
            # The trick is complete (inlined: this runs every few plays).
            winner = self._best_seat
            side = self._sides[winner]
            self._captured[side] += self._trick_thirds
            self._tricks_won[side] += 1
            self._winners.append(winner)
            self._n_in_trick = 0
            self._turn = winner
            self._trick += 1
            if self._trick == 1:
                self._lead, self._lead_set = self._tables.lead, self._tables.lead_set
            self._after_trick(winner)
            return
        suit = card // 10
        if self._phase != _PLAY or action not in self._lead_set[suit][(hand >> (suit * 10)) & 1023]:
            self._refuse(seat, action)
            return
        self._hands[seat] = hand ^ (1 << card)
        self._plays.append(action)
        self._led_shift = suit * 10
        self._led_follow = self._follow[suit]
        self._led_follow_set = self._follow_set[suit]
        self._best = card
        self._best_seat = seat
        self._best_shift = suit * 10
        self._trick_thirds = self._values[card]
        self._n_in_trick = 1
        self._turn = self._next_seat[seat]

    def explain_refusal(self, action: Action) -> IllegalActionError:
        """Why the seat to act may not take ``action``; ValueError if it may.

        An action outside ``legal_actions()`` is refused before anything changes (the
        property tests check this), so trying it is how the reason is found.
        """
        if action in self.legal_actions():
            raise ValueError(f"action {action} is legal here")
        try:
            self.apply_action(action)
        except IllegalActionError as exc:
            return exc
        raise AssertionError(f"action {action} is not listed as legal but was applied")

    def _refuse(self, seat: int, action: Action) -> None:
        """Handle an action off the fast path: apply it if it is not a play, else raise."""
        if 0 <= action < NUM_PLAY_ACTIONS and self._phase == _PLAY:
            raise self._illegal_play(seat, action)
        self._apply_other(action)

    # -- declarations, call-out ----------------------------------------------------------

    def _auto_declare(self, seat: int, held: tuple[Action, ...]) -> None:
        points = self.rules.quattro_points
        chosen = sorted(held, key=lambda a: -declaration_points(a - DECLARE_BASE, points))
        if self.rules.declaration_limit:
            chosen = chosen[: self.rules.declaration_limit]
        for action in sorted(chosen):
            self._record_declaration(seat, action - DECLARE_BASE)

    def _record_declaration(self, seat: int, declaration: int) -> None:
        self._declared.append((seat, declaration))
        self._declared_points[self._sides[seat]] += declaration_points(
            declaration, self.rules.quattro_points
        )

    def _next_declarer(self, start: int) -> None:
        """Give the declaration turn to the next seat from ``start`` that holds something."""
        seat = start
        while not self._pending[seat]:
            seat = (seat + 1) % self._players
            if seat == self.eldest:
                self._phase = _PLAY
                self._turn = self.eldest
                return
        self._turn = seat

    def _apply_other(self, action: Action) -> None:
        seat = self._turn
        if self._phase == _DONE:
            raise IllegalActionError(Reason.GAME_OVER, "the deal is over")
        if is_declaration(action):
            self._declare(seat, action)
        elif action == END_DECLARATIONS:
            if self._phase != _DECLARE:
                raise IllegalActionError(
                    Reason.NOT_DECLARING, f"seat {seat}: there is no declaration round to end"
                )
            self._pending[seat] = ()
            self._next_declarer(seat)
        elif action == CALL_OUT:
            self._call_out(seat)
        elif 0 <= action < NUM_PLAY_ACTIONS:
            raise IllegalActionError(
                Reason.DECLARATIONS_FIRST,
                f"seat {seat}: declarations come before the first card; "
                "declare or end-declarations",
            )
        else:
            raise IllegalActionError(Reason.UNKNOWN_ACTION, f"action id {action} names no action")

    def _declare(self, seat: int, action: Action) -> None:
        declaration = action - DECLARE_BASE
        name = DECLARATION_NAMES[declaration]
        rules = self.rules
        if not rules.declarations:
            raise IllegalActionError(Reason.DECLARATIONS_OFF, "these rules have no declarations")
        if rules.auto_declare:
            raise IllegalActionError(
                Reason.DECLARATIONS_OFF, "auto_declare is on: the referee declares for everyone"
            )
        if (seat, declaration) in self._declared:
            raise IllegalActionError(
                Reason.ALREADY_DECLARED, f"seat {seat} has already declared {name}"
            )
        if declaration not in HELD[honours_key(self.initial_hand(seat))]:
            raise IllegalActionError(Reason.FALSE_DECLARATION, f"seat {seat} does not hold {name}")
        limit = rules.declaration_limit
        made = sum(1 for s, _ in self._declared if s == seat)
        if limit and made >= limit:
            raise IllegalActionError(
                Reason.DECLARATION_LIMIT, f"seat {seat} has made the {limit} declarations allowed"
            )
        # In trick 1 the seat to act has not played yet; after it, every seat has.
        open_now = self._phase == _DECLARE or (
            self._trick == 0 and not rules.declare_before_first_card
        )
        if not open_now or action not in self._pending[seat]:
            when = "the first card is led" if rules.declare_before_first_card else "its first card"
            raise IllegalActionError(
                Reason.LATE_DECLARATION,
                f"seat {seat} declares {name} too late: declarations come before {when}",
            )
        self._record_declaration(seat, declaration)
        remaining = tuple(a for a in self._pending[seat] if a != action)
        if limit and made + 1 >= limit:
            remaining = ()
        self._pending[seat] = remaining
        if self._phase == _DECLARE and not remaining:
            self._next_declarer(seat)

    def _call_out(self, seat: int) -> None:
        if not self.rules.call_out:
            raise IllegalActionError(
                Reason.CALL_OUT_NOT_ALLOWED, "calling out is off in these rules (knob call_out)"
            )
        if self._phase != _PLAY or self._n_in_trick:
            raise IllegalActionError(
                Reason.CALL_OUT_NOT_ALLOWED, f"seat {seat} may call out only when leading a trick"
            )
        side = self._sides[seat]
        claimed = (
            self.totals[side] + floored_points(self._captured[side]) + self._declared_points[side]
        )
        self.call_out = CallOut(seat, claimed, claimed >= self.rules.target)
        self._phase = _DONE

    # -- scoring -----------------------------------------------------------------------------

    def _after_trick(self, winner: int) -> None:
        """A trick was taken: the deal ends once the hands are empty (tressette a due draws
        from its stock here first)."""
        if not self._hands[winner]:
            self._finish(winner)

    def _finish(self, last_winner: int) -> None:
        captured = list(self._captured)
        captured[self._sides[last_winner]] += self._last_trick_extra()
        self.score = score_deal(
            self.rules, captured, self._tricks_won, self._declared_points, last_winner
        )
        self._phase = _DONE

    def _last_trick_extra(self) -> int:
        """Thirds that go with the last trick beyond its bonus point; none in tressette."""
        return 0

    # -- what seats may see ------------------------------------------------------------------

    def initial_hand(self, seat: int) -> CardSet:
        """The cards ``seat`` was dealt."""
        hand = self._hands[seat]
        for s, action in self.plays:
            if s == seat:
                hand |= 1 << (action % 40)
        return hand

    @property
    def plays(self) -> tuple[tuple[int, Action], ...]:
        """Every card played, as (seat, play action), in order."""
        # Extended from where the last call stopped: observations ask for this every turn.
        out = self._seated_plays
        players = self._players
        for i in range(len(out), len(self._plays)):
            trick, k = divmod(i, players)
            leader = self._winners[trick - 1] if trick else self.eldest
            out.append(((leader + k) % players, self._plays[i]))
        return tuple(out)

    @property
    def declared(self) -> tuple[tuple[int, int], ...]:
        """Declarations made so far: (seat, declaration id), in order."""
        return tuple(self._declared)

    @property
    def declared_points(self) -> tuple[int, ...]:
        """Points declared so far by each side."""
        return tuple(self._declared_points)

    @property
    def trick_winners(self) -> tuple[int, ...]:
        """Winning seat of each completed trick."""
        return tuple(self._winners)

    @property
    def tricks_played(self) -> int:
        """Completed tricks."""
        return self._trick

    @property
    def captured(self) -> tuple[int, ...]:
        """Card thirds each side has captured in completed tricks."""
        return tuple(self._captured)

    def trick_state(self) -> tuple[int, int, int, int]:
        """The trick being played, for search: ``(cards in it, led suit, card winning it,
        seat of that card)``; ``(0, -1, -1, -1)`` when nobody has played to it yet."""
        n = self._n_in_trick
        if not n:
            return 0, -1, -1, -1
        return n, self._led_shift // 10, self._best, self._best_seat

    def observation(self, seat: int) -> Observation:
        """What ``seat`` may know: its own hand and the public history, nothing hidden."""
        plays = self.plays
        players = self._players
        done = self._trick * players
        tricks = self._done_tricks
        winners = self._winners
        if len(tricks) < len(winners):
            # Extended as tricks end: observations ask for every finished trick every turn.
            tricks += tuple(
                (plays[i * players : (i + 1) * players], winners[i])
                for i in range(len(tricks), len(winners))
            )
            self._done_tricks = tricks
        to_act = self.current_player()
        return Observation(
            seat=seat,
            dealer=self.dealer,
            phase=self.phase,
            hand=tuple(cards_of(self._hands[seat])),
            current_player=to_act,
            legal_actions=self.legal_actions() if to_act == seat else (),
            trick=plays[done:],
            tricks=tricks,
            declarations=tuple(self._declared),
            captured=tuple(self._captured),
            totals=self.totals,
            trump=self.trump,
        )

    # -- explaining a refused play ---------------------------------------------------------

    def _illegal_play(self, seat: int, action: Action) -> IllegalActionError:
        hand = self._hands[seat]
        card = action % 40
        suit = card // 10
        signal = Signal(action // 40)
        what = f"seat {seat} plays {action_name(action)}"
        if not hand >> card & 1:
            return IllegalActionError(
                Reason.CARD_NOT_IN_HAND, f"{what}: {CARD_NAMES[card]} is not in seat {seat}'s hand"
            )
        leading = self._n_in_trick == 0
        led = self._led_shift // 10
        if not leading and suit != led and hand & SUIT_MASKS[led]:
            return IllegalActionError(Reason.MUST_FOLLOW_SUIT, follow_suit_refusal(what, led))
        rules = self.rules
        name = SIGNAL_NAMES[signal]
        if rules.signals == "muto":
            return IllegalActionError(Reason.SIGNAL_NOT_ALLOWED, f"{what}: no signals under muto")
        if rules.signals == "leader" and (not leading or self._trick == 0):
            return IllegalActionError(
                Reason.SIGNAL_NOT_ALLOWED,
                f"{what}: only the leader may signal, and only from the second trick",
            )
        if signal in (Signal.BUSSO, Signal.RIBUSSO) and not leading:
            return IllegalActionError(
                Reason.BUSSO_NOT_LEADING, f"{what}: {name} only on leading a trick"
            )
        if signal == Signal.RIBUSSO and not rules.ribusso:
            return IllegalActionError(Reason.SIGNAL_NOT_ALLOWED, f"{what}: ribusso is off")
        lengths = signal in (Signal.STRISCIO_LUNGO, Signal.STRISCIO_CORTO)
        if (signal == Signal.STRISCIO and rules.striscio_lengths) or (
            lengths and not rules.striscio_lengths
        ):
            plain = "lungo or corto" if rules.striscio_lengths else "plain striscio"
            return IllegalActionError(
                Reason.SIGNAL_NOT_ALLOWED, f"{what}: these rules say striscio as {plain}"
            )
        rest = (hand >> (suit * 10)) & 1023 & ~(1 << (card % 10))
        says = {
            Signal.STRISCIO_LUNGO: " (lungo says 4 or more)",
            Signal.STRISCIO_CORTO: " (corto says exactly 3)"
            if rules.striscio_corto == "three"
            else " (corto says 1 to 3)",
        }.get(Signal(signal), "")
        return IllegalActionError(
            Reason.FALSE_SIGNAL,
            f"{what}: false {name}, seat {seat} would keep {_POPCOUNT[rest]} "
            f"{SUIT_NAMES[suit]}" + (" with an honour" if rest & _HONOURS else "") + says,
        )
