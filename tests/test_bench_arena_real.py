"""The arena's benchmarks on small arenas, for real: ``arena-live`` (a real ``tavolo arena
serve`` whose ladder plays, and an upload rated through the API) and ``arena-order``'s real
bots of known strength in real games."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.sandbox.probe import sandbox_problem
from tournaments.arena.store import ArenaStore
from tournaments.benchmarks.arena_live import bench_live
from tournaments.benchmarks.arena_real_order import real_order_run, shares

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=str(sandbox_problem()))


def test_a_small_live_arena_plays_and_rates_an_upload() -> None:
    found = bench_live(4, minutes=0.25, uploads=1, parallel=1, deals=1, warm_up=2)
    assert found.submissions == 4 and found.seconds >= 15
    # Meetings of two games played in the window, and counted as the leaderboard counts.
    assert found.games > 0 and found.games == 2 * found.meetings
    assert found.games_per_hour == pytest.approx(found.games / found.seconds * 3600)
    [wait] = found.upload_to_rating
    assert 0 < wait < 900 and found.median_upload_to_rating == wait


def test_real_bots_of_known_strength_meet_in_real_games(tmp_path: Path) -> None:
    assert shares(5) == [0.0, 0.25, 0.5, 0.75, 1.0]
    # Two looks, after 2 and 4 meetings of 2 games: the figure is a look's game count.
    run = real_order_run("round-robin", 3, meetings=4, checkpoint=2, seed=0, deals=1,
                         folder=tmp_path)  # fmt: skip
    assert run.scheme == "round-robin" and run.games_to_order in (None, 4, 8)
    store = ArenaStore(tmp_path / "arena.db")
    try:
        # Every pair met (round robin), each meeting two real games kept with its record.
        assert store.ladder.meetings_done() == 4 and len(store.ladder.results()) == 8
        for meeting, game, _, _ in store.ladder.games_of(store.submissions()[0].id):
            lines = store.ladder.record_of(meeting, game)
            assert lines is not None and '"type":"play"' in "\n".join(lines)
        files = store.files_of(store.submissions()[-1])
        assert "RANDOM_SHARE = 1.0" in (files / "bot.py").read_text(encoding="utf-8")
    finally:
        store.close()
