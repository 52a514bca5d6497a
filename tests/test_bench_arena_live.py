"""``tavolo bench arena-live`` on a small arena, for real: a real ``tavolo arena serve``
whose ladder plays, and an upload rated through the API."""

from __future__ import annotations

import pytest

from referee.sandbox.probe import sandbox_problem
from tournaments.benchmarks.arena_live import bench_live

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=str(sandbox_problem()))


def test_a_small_live_arena_plays_and_rates_an_upload() -> None:
    found = bench_live(4, minutes=0.25, uploads=1, parallel=1, deals=1, warm_up=2)
    assert found.submissions == 4 and found.seconds >= 15
    # Meetings of two games played in the window, and counted as the leaderboard counts.
    assert found.games > 0 and found.games == 2 * found.meetings
    assert found.games_per_hour == pytest.approx(found.games / found.seconds * 3600)
    [wait] = found.upload_to_rating
    assert 0 < wait < 900 and found.median_upload_to_rating == wait
