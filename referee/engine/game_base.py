"""What every game family shares: deals until the game is over, its record, faults, outcomes.

:class:`GameBase` plays deals one after another until a side reaches the target (or a
fixed number of deals), adds up the scores, and with ``record=True`` keeps the game's
events (``referee.engine.events``), whose lines are a game record (``docs/records.md``).
Each family says how a deal starts, ends and is recorded (its package's ``game`` module).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, Protocol, Self, TypeVar

from referee.engine.cards import cards_of, names
from referee.engine.cloning import clone_state
from referee.engine.codec import Action
from referee.engine.deal_book import DealBook
from referee.engine.deals import Deal, first_dealer
from referee.engine.errors import IllegalActionError, Reason
from referee.engine.events import Ended, Event, Forfeited, GameBegun, Incident, Rejected, frozen
from referee.engine.rules import Rules

RECORD_FORMAT = "tavolo-record/1"
DealSource = Callable[[int, int], Deal]
"""``(deal number, dealer) -> Deal``: given deals in place of the seeded ones."""


class Termination(StrEnum):
    """Why a game ended."""

    TARGET_REACHED = "target_reached"
    """A side reached the target with the highest total (ciapanò: someone reached it, and
    the lowest total won)."""
    DEALS_PLAYED = "deals_played"
    """The fixed number of deals was played (normal end of a deal-count game)."""
    CALLED_OUT = "called_out"
    """A player called out, rightly or wrongly."""
    ILLEGAL_ACTION = "illegal_action"
    """A player's illegal actions forfeited the game."""
    TIMEOUT = "timeout"
    """A player ran out of time."""
    CRASH = "crash"
    """A player's process died or its connection was lost."""


@dataclass(frozen=True)
class Outcome:
    """How a game ended."""

    termination: Termination
    totals: tuple[int, ...]
    """Game points per side."""
    deals: int
    """Deals played, counting an unfinished last deal (a forfeit or a call-out)."""
    places: tuple[int, ...]
    """Each side's place, 0 the first; sides level share a place. What the tournament
    reads for every pair of sides (:func:`rank_sides`)."""

    @property
    def winner(self) -> int | None:
        """Winning side, or None for a draw: the side alone in first place."""
        return winner_of(self.places)


def rank_sides(
    totals: Sequence[int], lower_wins: bool, first: int | None = None, last: int | None = None
) -> tuple[int, ...]:
    """Each side's place (0 the first, sides level share one): by total, the higher first
    unless ``lower_wins`` (ciapanò); ``first`` (a correct call-out) ahead of all and
    ``last`` (a forfeit, a wrong call-out) behind all. Every family's winner is decided
    here, for the target, deals played, a forfeit and a call-out alike."""

    def key(side: int) -> tuple[int, int]:
        rank = 0 if side == first else 2 if side == last else 1
        return rank, totals[side] if lower_wins else -totals[side]

    keys = [key(side) for side in range(len(totals))]
    return tuple(sorted(set(keys)).index(k) for k in keys)


def winner_of(places: Sequence[int]) -> int | None:
    """The side alone in first place; None if several share it (a draw)."""
    firsts = [side for side, place in enumerate(places) if place == 0]
    return firsts[0] if len(firsts) == 1 else None


ObsT_co = TypeVar("ObsT_co", covariant=True)


class _Deal(Protocol[ObsT_co]):
    """What a game asks of one deal of any family."""

    def current_player(self) -> int | None: ...
    def legal_actions(self) -> tuple[Action, ...]: ...
    def apply_action(self, action: Action) -> None: ...
    def is_terminal(self) -> bool: ...
    def explain_refusal(self, action: Action) -> IllegalActionError: ...
    def observation(self, seat: int) -> ObsT_co: ...


DealT = TypeVar("DealT", bound=_Deal[Any])
ObsT = TypeVar("ObsT")


class GameBase(Generic[DealT, ObsT]):
    """Deals until the game is over, its record, and faults: what every family shares.

    ``deals=N`` plays exactly N deals instead of to the target. ``book`` deals the lines of
    a deal book in order from position ``book_start`` (from 0) instead of seeded deals;
    ``deal_source(number, dealer)``, for tests and analysis, gives deals of its own.
    A family says how a deal starts, ends and is recorded.
    """

    def __init__(
        self,
        rules: Rules,
        seed: str,
        *,
        deals: int | None = None,
        seats: Sequence[str] | None = None,
        record: bool = False,
        deal_source: Callable[[int, int], Deal] | None = None,
        book: DealBook | None = None,
        book_start: int = 0,
    ) -> None:
        if deals is not None and deals < 1:
            raise ValueError("a game needs at least one deal")
        if book is not None:
            if deal_source is not None:
                raise ValueError("a game takes its deals from a book or a deal_source, not both")
            deal_source = book.source_from(book_start)
        self.rules = rules
        self.seed = seed
        self.max_deals = deals
        self.totals = [0] * rules.sides
        self.outcome: Outcome | None = None
        self.deal_number = 0
        self.events: list[Event] | None = [] if record else None
        self.think_ms: dict[int, int] = {}
        """By index in ``events``, a bot's answer's think time, as a referee timed it: a
        fact of the match, written last in the answer's record line (``ms``)."""
        self._deal_source = deal_source
        self._dealer = first_dealer(rules.game, seed, rules.players)
        if self.events is not None:
            self.events.append(
                GameBegun(
                    format=RECORD_FORMAT,
                    game=rules.game,
                    rules=frozen(rules.record_dict()),
                    seed=seed,
                    deals=deals,
                    seats=tuple(seats) if seats is not None else None,
                    book=None
                    if book is None
                    else frozen({"sha256": book.sha256, "start": book_start + 1}),
                )
            )
        self.deal: DealT = self._start_deal()

    def line(self, index: int) -> dict[str, Any]:
        """Record line ``index`` (``docs/records.md``): its event's, with its think time."""
        assert self.events is not None
        out = self.events[index].line()
        ms = self.think_ms.get(index)
        if ms is not None:
            out["ms"] = ms
        return out

    def text(self, index: int) -> str:
        """:meth:`line` ``index``'s canonical text (:func:`~referee.engine.events.line_text`)."""
        assert self.events is not None
        text = self.events[index].text()
        ms = self.think_ms.get(index)
        # ``ms`` is the line's last key, an int: its text is the event's, with it added.
        return text if ms is None else f'{text[:-1]},"ms":{ms}}}'

    def lines(self) -> list[dict[str, Any]]:
        """The record so far, as its lines; [] unless recorded."""
        return [self.line(i) for i in range(len(self.events or ()))]

    def time_answer(self, index: int, ms: int) -> None:
        """Give event ``index``, a bot's answer (an action of its, or a refused one), its
        think time; ValueError for any other event."""
        assert self.events is not None
        event = self.events[index]
        if event.TYPE not in self.rules.family.kinds and not isinstance(event, Rejected):
            raise ValueError(f"a '{event.TYPE}' event is not a bot's answer")
        self.think_ms[index] = ms

    # -- the state API ------------------------------------------------------------------

    def current_player(self) -> int | None:
        """Seat to act, or None once the game is over."""
        return None if self.outcome else self.deal.current_player()

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self.outcome is not None

    def legal_actions(self) -> tuple[Action, ...]:
        """Legal actions of the seat to act."""
        return () if self.outcome else self.deal.legal_actions()

    def clone(self) -> Self:
        """A copy to search from: playing on it leaves this game as it is (its deal is
        cloned; the record so far is copied; rules and tables are shared)."""
        return clone_state(self)

    def returns(self) -> tuple[float, ...]:
        """Per seat, once the game is over: 1 for each seat of the winning side, and the
        losers share -1 (each seat of a losing side gets -1 divided by the losing sides);
        all 0 for a draw, and while the game goes on. The sum over the sides is 0."""
        rules = self.rules
        outcome = self.outcome
        if outcome is None or outcome.winner is None:
            return (0.0,) * rules.players
        loss = -1.0 / (rules.sides - 1)
        return tuple(
            1.0 if rules.side_of(seat) == outcome.winner else loss for seat in range(rules.players)
        )

    def action_to_string(self, action: Action) -> str:
        """The text of an action of this game's family, e.g. ``AS volo`` or ``call AD``."""
        return self.rules.family.codec.name(action)

    def observation(self, seat: int) -> ObsT:
        """What ``seat`` may know now."""
        obs: ObsT = self.deal.observation(seat)
        return obs

    def apply_action(self, action: Action) -> None:
        """Apply the action of the seat to act; illegal actions raise and change nothing."""
        if self.outcome:
            raise IllegalActionError(Reason.GAME_OVER, "the game is over")
        deal = self.deal
        seat = deal.current_player()
        assert seat is not None
        before = self._before_action()
        deal.apply_action(action)
        if self.events is not None:
            self._log_action(seat, action, before)
        if deal.is_terminal():
            self._end_deal()

    def forfeit(self, seat: int, termination: Termination, detail: str = "") -> None:
        """End the game now; the side of ``seat`` loses for ``termination``."""
        if self.outcome:
            raise IllegalActionError(Reason.GAME_OVER, "the game is over")
        if not 0 <= seat < self.rules.players:
            raise ValueError(f"seat {seat} is not at this table")
        if self.events is not None:
            self.events.append(Forfeited(seat, termination.value, detail))
        self._finish(termination, last=self.rules.side_of(seat))

    def note_rejected(self, seat: int, action: Action) -> IllegalActionError:
        """Record that ``seat`` tried ``action`` and the rules refused it; return why.

        Raises ValueError if the action is in fact legal (the referee must apply it).
        """
        if self.outcome:
            raise IllegalActionError(Reason.GAME_OVER, "the game is over")
        if seat != self.deal.current_player():
            raise ValueError(f"seat {seat} is not to act")
        try:
            refusal = self.deal.explain_refusal(action)
        except IllegalActionError as exc:
            refusal = exc
        if self.events is not None:
            self.events.append(Rejected(seat, action, refusal.reason.value))
        return refusal

    def note_incident(self, seat: int, kind: str, detail: str) -> None:
        """Record something the referee saw a seat do outside the rules' actions."""
        if self.events is not None:
            self.events.append(Incident(seat, kind, detail))

    # -- what every family's deals share ----------------------------------------------------

    def _next_cards(self, *, pass_the_deal: bool = True) -> Deal:
        """The next deal's cards: the given deal, else the family's seeded one. The dealer
        passes to the next seat from deal 2 on, unless ``pass_the_deal`` is False (a
        Calabresella redeal)."""
        self.deal_number += 1
        rules = self.rules
        if self.deal_number > 1 and pass_the_deal:
            self._dealer = (self._dealer + 1) % rules.players
        if self._deal_source is not None:
            return self._deal_source(self.deal_number, self._dealer)
        return rules.family.deal(rules, self.seed, self.deal_number, self._dealer)

    def _dealt(self, dealt: Deal) -> dict[str, Any]:
        """A ``Dealt`` event's first fields: the deal, its dealer and every hand."""
        return {
            "deal": self.deal_number,
            "dealer": dealt.dealer,
            "hands": tuple(tuple(names(cards_of(h))) for h in dealt.hands),
        }

    # -- what a family says -----------------------------------------------------------------

    def _start_deal(self) -> DealT:
        raise NotImplementedError

    def _end_deal(self) -> None:
        raise NotImplementedError

    def _before_action(self) -> int:
        """What ``_log_action`` needs to know of the deal as it was before the action."""
        return 0

    def _log_action(self, seat: int, action: Action, before: int) -> None:
        raise NotImplementedError

    def _end_if_over(self) -> bool:
        """After a deal's points are added: finish the game if it is over; True if so.

        Plays to the target, or exactly ``deals`` deals. Higher wins: a single highest
        total at or above the target ends it (a tie at the top plays one more deal).
        Lower wins (ciapanò): anyone at or above the target ends it.
        """
        if self.max_deals is not None:
            if self.deal_number >= self.max_deals:
                self._finish(Termination.DEALS_PLAYED)
                return True
            return False
        top = max(self.totals)
        if self.rules.lower_wins:
            over = top >= self.rules.target
        else:
            over = top >= self.rules.target and self.totals.count(top) == 1
        if over:
            self._finish(Termination.TARGET_REACHED)
        return over

    def _finish(
        self, termination: Termination, *, first: int | None = None, last: int | None = None
    ) -> None:
        places = rank_sides(self.totals, self.rules.lower_wins, first, last)
        self.outcome = Outcome(termination, tuple(self.totals), self.deal_number, places)
        if self.events is not None:
            self.events.append(
                Ended(termination.value, self.outcome.winner, tuple(self.totals), self.deal_number)
            )


AnyGame = GameBase[Any, Any]
"""A game of any family: the state API, the record and faults are the same for all."""
