"""Ciapanò, worked by hand: four seats each alone; points count against; the lowest wins."""

from __future__ import annotations

import pytest

from referee.engine.deals import Deal
from referee.engine.errors import RulesError
from referee.engine.game_base import Termination
from referee.engine.registry import preset
from referee.families.tressette.game import TressetteGame
from tests.helpers import ONE_SUIT_EACH, hand
from tournaments.results import pair_results, tallies
from tournaments.storage import GameRow

CIAPANO = preset("ciapano")
SEATS = [[0], [1], [2], [3]]


def test_preset() -> None:
    assert (CIAPANO.players, CIAPANO.sides, CIAPANO.partnerships) == (4, 4, False)
    assert CIAPANO.lower_wins and CIAPANO.target == 21
    assert CIAPANO.seats_of(2) == [2]
    with pytest.raises(RulesError, match="'call_out' has no meaning in ciapanò"):
        CIAPANO.with_knobs(["call_out=true"])


def one_suit_deals(number: int, dealer: int) -> Deal:
    """Each seat holds a whole suit: the eldest leads its suit and takes every trick."""
    return Deal("ciapano", "x", number, dealer, tuple(hand(h) for h in ONE_SUIT_EACH), 0)


def play_out(state: TressetteGame) -> None:
    while not state.is_terminal():
        state.apply_action(max(a for a in state.legal_actions() if a < 40))


def test_the_eldest_takes_everything_and_every_point_counts_against_it() -> None:
    state = TressetteGame(CIAPANO, "c", deals=1, deal_source=one_suit_deals, record=True)
    eldest = state.deal.eldest
    play_out(state)
    assert state.events is not None
    score = next(e for e in state.lines() if e["type"] == "score")
    # 32 thirds of cards and 3 for the last trick: 35 thirds, 11 points, all the eldest's.
    assert score["thirds"][eldest] == 35 and score["points"][eldest] == 11
    # Every trick to one seat is noted, but ciapanò's cappotto = none adds nothing.
    assert sum(score["points"]) == 11 and score["cappotto"] == eldest
    outcome = state.outcome
    assert outcome is not None and outcome.termination is Termination.DEALS_PLAYED
    assert outcome.winner is None, "the three others share the lowest total, 0: a draw"


def test_reaching_the_target_ends_the_game_and_the_lowest_wins() -> None:
    rules = CIAPANO.with_knobs(["target=20"])
    dealers: list[int] = []

    def deals(number: int, dealer: int) -> Deal:
        dealers.append(dealer)
        return one_suit_deals(number, dealer)

    state = TressetteGame(rules, "c", deal_source=deals)
    play_out(state)
    outcome = state.outcome
    assert outcome is not None and outcome.termination is Termination.TARGET_REACHED
    # The deal passes round: each eldest in turn takes 11 points. After two deals two
    # seats have 11, two have 0: nobody has 20 yet. After three, nobody; after four
    # deals every seat has 11; the fifth deal's eldest reaches 22 and the game ends.
    assert outcome.deals == 5
    assert sorted(outcome.totals) == [11, 11, 11, 22]
    assert outcome.winner is None, "three seats share the lowest total"


def test_a_single_lowest_total_wins() -> None:
    rules = CIAPANO.with_knobs(["target=11"])
    state = TressetteGame(rules, "c", deal_source=one_suit_deals)
    play_out(state)
    outcome = state.outcome
    assert outcome is not None and outcome.deals == 1
    # One seat took 11 and reached the target; the other three tie at 0: a draw.
    assert outcome.winner is None
    assert outcome.termination is Termination.TARGET_REACHED


def game(totals: tuple[int, ...], winner: int | None) -> GameRow:
    return GameRow(1, 1, 1, ("a", "b", "c", "d"), winner, totals, "target_reached", None, 3, {})


def test_ratings_count_the_lower_total_as_the_better_result() -> None:
    row = game((25, 3, 10, 3), 1)
    results = {(r.a, r.b): r.score_a for r in pair_results([row], SEATS, lower_wins=True)}
    assert results == {
        ("a", "b"): 0.0, ("a", "c"): 0.0, ("a", "d"): 0.0,
        ("b", "c"): 1.0, ("b", "d"): 0.5, ("c", "d"): 0.0,
    }  # fmt: skip
    counted = tallies(["a", "b", "c", "d"], [row], SEATS, lower_wins=True)
    assert [counted[n].score for n in "abcd"] == [0.0, 2.5, 1.0, 2.5]
