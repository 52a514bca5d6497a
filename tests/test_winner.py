"""Who won a game is decided in one place, :func:`rank_sides`, and the tournament reads it.

Before, a forfeit named the side with the highest total the winner even in ciapanò, where
the lowest wins; the record's ``result`` line, the ``game_over`` event and ``tavolo
play``'s W-D-L said so, and only the tables were right, because they worked the result
out again from the totals.
"""

from __future__ import annotations

from pathlib import Path

from referee.engine.game_base import Termination, rank_sides, winner_of
from referee.engine.registry import new_game, preset
from referee.match.match import game_over_event
from tournaments.results import pair_results, tallies
from tournaments.storage import GameRow, Store

FOUR = ((0,), (1,), (2,), (3,))
"""Ciapanò: every seat a side of its own."""


def test_a_ciapano_forfeit_is_won_by_the_lowest_total_left() -> None:
    game = new_game(preset("ciapano"), "s0", record=True)
    while game.deal_number < 3:
        game.apply_action(game.legal_actions()[0])
    assert game.totals == [3, 11, 2, 6]
    game.forfeit(1, Termination.TIMEOUT)
    # By hand: seat 1 forfeits and is last; of 3, 2 and 6 the lowest, side 2, wins
    # (before: the highest, side 3).
    assert game.outcome is not None
    assert game.outcome.places == (1, 3, 0, 2)
    assert game.outcome.winner == 2
    assert game.events is not None
    assert game.lines()[-1] == {
        "type": "result", "termination": "timeout", "winner": 2,
        "totals": [3, 11, 2, 6], "deals": 3,
    }  # fmt: skip
    assert game_over_event(1, game.outcome, 1).game_over.winner == 2


def test_places_worked_by_hand() -> None:
    # Higher wins, a forfeit by side 2 (the highest): it is last all the same.
    assert rank_sides([4, 3, 8, 6], lower_wins=False, last=2) == (1, 2, 3, 0)
    # Lower wins, the same totals and forfeit: 3 first, then 4, then 6.
    assert rank_sides([4, 3, 8, 6], lower_wins=True, last=2) == (1, 0, 3, 2)
    # A correct call-out puts its side first whatever the totals.
    assert rank_sides([20, 5], lower_wins=False, first=1) == (1, 0)
    # Level totals share a place; two share the first: a draw.
    assert rank_sides([5, 9, 5], lower_wins=True) == (0, 1, 0)
    assert winner_of((0, 1, 0)) is None
    assert winner_of(rank_sides([5, 9, 7], lower_wins=True)) == 0


def test_a_two_sided_game_played_to_its_end() -> None:
    # Tressette to 11 in one deal of the seed: the side reaching it alone wins.
    game = new_game(preset("tressette"), "s0")
    while game.outcome is None:
        game.apply_action(game.legal_actions()[0])
    outcome = game.outcome
    assert outcome.termination in (Termination.TARGET_REACHED, Termination.DEALS_PLAYED)
    top = max(outcome.totals)
    assert outcome.winner == outcome.totals.index(top)
    assert outcome.places[outcome.winner] == 0


def _row(match_id: int, totals: tuple[int, ...], places: tuple[int, ...] | None) -> GameRow:
    winner = None if places is None else winner_of(places)
    return GameRow(
        match_id=match_id, number=1, set_number=1, sides=("a", "b", "c", "d"), winner=winner,
        totals=totals, termination="timeout", forfeit_seat=1, deals=3, faults={},
        places=places,
    )  # fmt: skip


def test_the_tournament_reads_the_places_the_game_stored(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with Store.open_for_run(path, fingerprint="f", name="t", config_text="") as store:
        match = store.add_match(1, ("a", "b", "c", "d"), "seed", 1)
        # Places the stored totals would not give: the tournament follows the places.
        store.add_game(match.id, _row(match.id, (3, 11, 2, 6), (3, 2, 1, 0)), ["{}"])
    with Store.open_for_reading(path) as store:
        [game] = store.games()
    assert game.places == (3, 2, 1, 0)
    scores = {(r.a, r.b): r.score_a for r in pair_results([game], FOUR, lower_wins=True)}
    assert scores == {
        ("a", "b"): 0.0, ("a", "c"): 0.0, ("a", "d"): 0.0,
        ("b", "c"): 0.0, ("b", "d"): 0.0, ("c", "d"): 0.0,
    }  # fmt: skip
    assert tallies(["a", "b", "c", "d"], [game], FOUR, lower_wins=True)["d"].score == 3.0


def test_a_game_stored_before_places_is_ranked_by_the_engine() -> None:
    old = _row(1, (3, 11, 2, 6), None)
    scores = {(r.a, r.b): r.score_a for r in pair_results([old], FOUR, lower_wins=True)}
    # Side 1 forfeited: it loses to all; the rest, lower first: c (2), a (3), d (6).
    assert scores[("a", "b")] == 1.0 and scores[("b", "c")] == 0.0
    assert scores[("a", "c")] == 0.0 and scores[("a", "d")] == 1.0
