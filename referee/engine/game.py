"""A whole game: seeded deals, one after another, until a side reaches the target.

:class:`GameState` deals each deal from the seed (see :mod:`referee.engine.deals`),
rotates the dealer, adds up the scores and decides the outcome. With ``record=True``
it also writes the game's events, the lines of a game record (``docs/records.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

from referee.engine.actions import (
    CALL_OUT,
    END_DECLARATIONS,
    NUM_PLAY_ACTIONS,
    SIGNAL_NAMES,
    Action,
    is_declaration,
)
from referee.engine.cards import CARD_NAMES, CardSet, cards_of, names
from referee.engine.deals import Deal, deal_cards, first_dealer
from referee.engine.declarations import DECLARATION_CARDS, DECLARATION_NAMES, declaration_points
from referee.engine.errors import IllegalActionError, Reason
from referee.engine.rules import Rules
from referee.engine.tressette import Observation, TressetteDeal
from referee.engine.tressette_a_due import TressetteADueDeal
from referee.engine.tressette_a_tre import TressetteATreDeal

RECORD_FORMAT = "tavolo-record/1"

DEAL_CLASSES: dict[str, type[TressetteDeal]] = {
    "tressette": TressetteDeal,
    "tressette-a-tre": TressetteATreDeal,
    "ciapano": TressetteDeal,
    "tressette-a-due": TressetteADueDeal,
}
"""The deal class of each engine family."""


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
    winner: int | None
    """Winning side, or None for a draw."""
    totals: tuple[int, ...]
    """Game points per side."""
    deals: int
    """Deals played, counting an unfinished last deal (a forfeit or a call-out)."""


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
    if rules.game == "tressette-a-due":
        return TressetteADueDeal(
            rules, hands, dealer, stock=stock, widow=widow, totals=totals, trump=trump
        )
    return DEAL_CLASSES[rules.game](rules, hands, dealer, widow=widow, totals=totals, trump=trump)


def _cards(mask: CardSet) -> list[str]:
    return names(cards_of(mask))


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

    ``deals=N`` plays exactly N deals instead of to the target. ``deal_source(number,
    dealer)``, for tests and analysis, replaces the seeded deals where the family has one.
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
    ) -> None:
        if deals is not None and deals < 1:
            raise ValueError("a game needs at least one deal")
        self.rules = rules
        self.seed = seed
        self.max_deals = deals
        self.totals = [0] * rules.sides
        self.outcome: Outcome | None = None
        self.deal_number = 0
        self.events: list[dict[str, Any]] | None = [] if record else None
        self._deal_source = deal_source
        self._dealer = first_dealer(rules.game, seed, rules.players)
        if self.events is not None:
            self.events.append(
                {
                    "type": "game",
                    "format": RECORD_FORMAT,
                    "game": rules.game,
                    "rules": rules.record_dict(),
                    "seed": seed,
                    "deals": deals,
                    "seats": list(seats) if seats is not None else None,
                }
            )
        self.deal: DealT = self._start_deal()

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
        mark = self._mark()
        deal.apply_action(action)
        if self.events is not None:
            self._log_action(seat, action, mark)
        if deal.is_terminal():
            self._end_deal()

    def forfeit(self, seat: int, termination: Termination, detail: str = "") -> None:
        """End the game now; the side of ``seat`` loses for ``termination``."""
        if self.outcome:
            raise IllegalActionError(Reason.GAME_OVER, "the game is over")
        if not 0 <= seat < self.rules.players:
            raise ValueError(f"seat {seat} is not at this table")
        if self.events is not None:
            self.events.append(
                {"type": "forfeit", "seat": seat, "reason": termination.value, "detail": detail}
            )
        loser = self.rules.side_of(seat)
        self._finish(termination, self._best_side(exclude=loser))

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
            self.events.append(
                {
                    "type": "rejected",
                    "seat": seat,
                    "action_id": action,
                    "reason": refusal.reason.value,
                }
            )
        return refusal

    def note_incident(self, seat: int, kind: str, detail: str) -> None:
        """Record something the referee saw a seat do outside the rules' actions."""
        if self.events is not None:
            self.events.append({"type": "incident", "seat": seat, "kind": kind, "detail": detail})

    # -- what a family says -----------------------------------------------------------------

    def _start_deal(self) -> DealT:
        raise NotImplementedError

    def _end_deal(self) -> None:
        raise NotImplementedError

    def _mark(self) -> int:
        """Taken before an action, handed to ``_log_action`` (what was there before)."""
        return 0

    def _log_action(self, seat: int, action: Action, mark: int) -> None:
        raise NotImplementedError

    def _end_if_over(self) -> bool:
        """After a deal's points are added: finish the game if it is over; True if so.

        Plays to the target (a single highest total at or above it wins; a tie at the top
        plays one more deal), or exactly ``deals`` deals.
        """
        top = max(self.totals)
        leaders = [s for s, t in enumerate(self.totals) if t == top]
        if self.max_deals is not None:
            if self.deal_number >= self.max_deals:
                self._finish(Termination.DEALS_PLAYED, leaders[0] if len(leaders) == 1 else None)
                return True
        elif top >= self.rules.target and len(leaders) == 1:
            self._finish(Termination.TARGET_REACHED, leaders[0])
            return True
        return False

    def _best_side(self, exclude: int) -> int | None:
        """The side with the highest total other than ``exclude``; None on a tie."""
        others = [s for s in range(self.rules.sides) if s != exclude]
        top = max(self.totals[s] for s in others)
        best = [s for s in others if self.totals[s] == top]
        return best[0] if len(best) == 1 else None

    def _finish(self, termination: Termination, winner: int | None) -> None:
        self.outcome = Outcome(termination, winner, tuple(self.totals), self.deal_number)
        if self.events is not None:
            self.events.append(
                {
                    "type": "result",
                    "termination": termination.value,
                    "winner": winner,
                    "totals": list(self.totals),
                    "deals": self.deal_number,
                }
            )


class GameState(GameBase[TressetteDeal, Observation]):
    """A game of the Tressette families (tressette, a tre, ciapanò) over seeded deals."""

    _trick_count = 0
    _draws_logged = 0

    def _mark(self) -> int:
        return len(self.deal.declared)

    # -- deals ---------------------------------------------------------------------------

    def _start_deal(self) -> TressetteDeal:
        self.deal_number += 1
        rules = self.rules
        if self.deal_number > 1:
            self._dealer = (self._dealer + 1) % rules.players
        if self._deal_source is not None:
            dealt = self._deal_source(self.deal_number, self._dealer)
        else:
            dealt = deal_cards(rules.game, self.seed, self.deal_number, self._dealer, rules.players)
        trump = dealt.last_card if rules.briscola else None
        if trump is not None and not (0 <= trump < 40 and dealt.hands[dealt.dealer] >> trump & 1):
            raise ValueError(f"the briscola's trump must be one of the dealer's cards, not {trump}")
        deal = new_deal(
            rules, dealt.hands, dealt.dealer, dealt.widow, self.totals, trump, dealt.stock
        )
        self._draws_logged = 0
        self._trick_count = 0
        if self.events is not None:
            event: dict[str, Any] = {
                "type": "deal",
                "deal": self.deal_number,
                "dealer": dealt.dealer,
                "hands": [_cards(h) for h in dealt.hands],
            }
            if dealt.stock:
                event["stock"] = [CARD_NAMES[c] for c in dealt.stock]
            elif dealt.widow:
                event["widow"] = _cards(dealt.widow)
            if trump is not None:
                event["trump"] = CARD_NAMES[trump]
            self.events.append(event)
            for seat, declaration in deal.declared:
                self._log_declaration(seat, declaration)
        return deal

    def _end_deal(self) -> None:
        deal = self.deal
        rules = self.rules
        if deal.call_out is not None:
            call = deal.call_out
            side = rules.side_of(call.seat)
            winner = side if call.correct else self._best_side(exclude=side)
            self._finish(Termination.CALLED_OUT, winner)
            return
        score = deal.score
        assert score is not None
        for side, points in enumerate(score.points):
            self.totals[side] += points
        if self.events is not None:
            self.events.append(
                {
                    "type": "score",
                    "deal": self.deal_number,
                    "last_trick": score.last_trick,
                    "thirds": list(score.thirds),
                    "card_points": list(score.card_points),
                    "declarations": list(score.declarations),
                    "cappotto": score.cappotto,
                    "points": list(score.points),
                    "totals": list(self.totals),
                }
            )
        if rules.lower_wins:
            self._end_deal_lower_wins()
            return
        if not self._end_if_over():
            self.deal = self._start_deal()  # below the target, or a tie at the top

    def _end_deal_lower_wins(self) -> None:
        """Ciapanò: once anyone reaches the target (or the deals are played), the lowest wins."""
        low = min(self.totals)
        lowest = [s for s, t in enumerate(self.totals) if t == low]
        winner = lowest[0] if len(lowest) == 1 else None  # several share the lowest: a draw
        if self.max_deals is not None:
            if self.deal_number >= self.max_deals:
                self._finish(Termination.DEALS_PLAYED, winner)
                return
        elif max(self.totals) >= self.rules.target:
            self._finish(Termination.TARGET_REACHED, winner)
            return
        self.deal = self._start_deal()

    # -- events ----------------------------------------------------------------------------

    def _log_declaration(self, seat: int, declaration: int) -> None:
        assert self.events is not None
        self.events.append(
            {
                "type": "declare",
                "seat": seat,
                "declaration": DECLARATION_NAMES[declaration],
                "cards": _cards(DECLARATION_CARDS[declaration]),
                "points": declaration_points(declaration, self.rules.quattro_points),
            }
        )

    def _log_action(self, seat: int, action: Action, mark: int) -> None:
        declared_before = mark
        assert self.events is not None
        deal = self.deal
        if action < NUM_PLAY_ACTIONS:
            signal = SIGNAL_NAMES[action // 40]
            self.events.append(
                {
                    "type": "play",
                    "seat": seat,
                    "card": CARD_NAMES[action % 40],
                    "signal": signal or None,
                }
            )
            winners = deal.trick_winners
            if len(winners) > self._trick_count:
                self._trick_count = len(winners)
                self.events.append(
                    {
                        "type": "trick",
                        "trick": self._trick_count,
                        "winner": winners[-1],
                    }
                )
                if isinstance(deal, TressetteADueDeal):
                    draws = deal.draws()
                    for s, card in draws[self._draws_logged :]:
                        self.events.append({"type": "draw", "seat": s, "card": CARD_NAMES[card]})
                    self._draws_logged = len(draws)
        elif is_declaration(action):
            for s, declaration in deal.declared[declared_before:]:
                self._log_declaration(s, declaration)
        elif action == END_DECLARATIONS:
            self.events.append({"type": "end-declarations", "seat": seat})
        elif action == CALL_OUT:
            call = deal.call_out
            assert call is not None
            self.events.append(
                {"type": "call-out", "seat": seat, "claimed": call.claimed, "correct": call.correct}
            )
