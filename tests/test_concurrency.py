"""Tables at once: the machine's busy share, the adjustments, and matches cut into sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tournaments.concurrency import (
    MOST_PER_CORE,
    WINDOW_SECONDS,
    AdaptiveTables,
    machine_times,
    split_games,
)


def test_machine_times_reads_the_first_line_of_proc_stat(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text("cpu  100 5 45 800 50 0 0 0 30 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
    busy, total = machine_times(stat)
    assert (busy, total) == (150.0, 1000.0)  # guest time is inside user time already
    stat.write_text("intr 1 2 3\n")
    with pytest.raises(OSError, match="no cpu line"):
        machine_times(stat)


def test_machine_times_of_this_machine_add_up() -> None:
    busy, total = machine_times()
    assert 0 <= busy <= total


class Machine:
    """A machine whose busy share over each window is set by the test."""

    def __init__(self) -> None:
        self.now = 0.0
        self.busy = 0.0
        self.total = 0.0

    def run(self, seconds: float, share: float) -> None:
        self.now += seconds
        self.total += seconds * 100
        self.busy += seconds * 100 * share

    def sample(self) -> tuple[float, float]:
        return self.busy, self.total


def tables(machine: Machine, cores: int = 2) -> AdaptiveTables:
    return AdaptiveTables(cores, sample=machine.sample, clock=lambda: machine.now)


def test_an_idle_machine_with_work_waiting_gets_one_more_table_a_window() -> None:
    machine = Machine()
    adaptive = tables(machine)
    assert adaptive.limit == 2
    machine.run(WINDOW_SECONDS / 2, 0.3)
    assert adaptive.adjust(waiting=True) == 2  # not a whole window yet
    machine.run(WINDOW_SECONDS / 2, 0.3)
    assert adaptive.adjust(waiting=True) == 3
    machine.run(WINDOW_SECONDS, 0.5)
    assert adaptive.adjust(waiting=False) == 3  # nothing waits: no table to add
    machine.run(WINDOW_SECONDS, 0.5)
    assert adaptive.adjust(waiting=True) == 4


def test_a_saturated_machine_loses_a_table_down_to_one_per_core() -> None:
    machine = Machine()
    adaptive = tables(machine)
    for _ in range(3):
        machine.run(WINDOW_SECONDS, 0.2)
        adaptive.adjust(waiting=True)
    assert adaptive.limit == 5
    machine.run(WINDOW_SECONDS, 0.9)  # busy enough: stays
    assert adaptive.adjust(waiting=True) == 5
    for expected in (4, 3, 2, 2):
        machine.run(WINDOW_SECONDS, 0.99)
        assert adaptive.adjust(waiting=True) == expected


def test_sleeping_bots_never_get_more_than_the_most_per_core() -> None:
    machine = Machine()
    adaptive = tables(machine, cores=1)
    for _ in range(3 * MOST_PER_CORE):
        machine.run(WINDOW_SECONDS, 0.0)
        adaptive.adjust(waiting=True)
    assert adaptive.limit == MOST_PER_CORE


def test_an_unreadable_machine_keeps_its_count() -> None:
    def unreadable() -> tuple[float, float]:
        raise OSError("no /proc/stat")

    adaptive = AdaptiveTables(4, sample=unreadable)
    assert not adaptive.measured
    assert adaptive.adjust(waiting=True) == 4


def test_split_games_cuts_whole_sets() -> None:
    # 150 games of 75 two-game sets over 2 tables: sets 1-38 and 39-75.
    assert split_games(150, 2, 2, 4) == [range(1, 77), range(77, 151)]
    # Tressette a tre rotates three ways: 9 sets of 3 games, in pieces of at least 4 sets.
    assert split_games(27, 3, 3, 4) == [range(1, 13), range(13, 25), range(25, 28)]
    assert split_games(16, 2, 4, 4) == [range(1, 9), range(9, 17)]
    assert split_games(14, 2, 4, 4) == [range(1, 15)]  # 7 sets: too few to cut
    assert split_games(10, 2, 1, 1) == [range(1, 11)]
    for games, rotation, pieces in [(150, 2, 5), (60, 3, 4), (40, 1, 3)]:
        runs = split_games(games, rotation, pieces, 4)
        assert [n for r in runs for n in r] == list(range(1, games + 1))
        assert len(runs) <= pieces
        assert all(len(r) % rotation == 0 for r in runs)
