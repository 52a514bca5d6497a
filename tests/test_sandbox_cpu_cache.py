"""A channel that stays open, measured: the CPU caches, through pages every sandbox maps.

Every sandbox maps the host's ``libc.so.6``, the same physical pages for all of them.
The hostile bot (``cpu-cache``) runs Flush+Reload on them: at each decision it times a
load of each of its partner's 40 lines (one a card), flushes them, and loads its own
lines of the cards it holds. Freezing does not close this: the partner's loads wait in
the cache for the next decision. ``clflush`` and ``rdtscp`` are instructions, not system
calls: no seccomp filter sees them.

This test pins the figure docs/security.md gives. It needs x86-64 and a C compiler for
the timer (tests/bots/cache_probe.c); elsewhere it is skipped. It is skipped too, saying
so with its figures, where lines of cards nobody holds load fast as often as held ones:
another process (another tenant of a virtual machine's host) keeps libc's lines in the
shared cache, and there the reading measures that, not the partner.
"""

from __future__ import annotations

import platform
import shutil
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from referee.entries import parse_entry
from tests.bots.hostile import CARDS, FlushReload
from tests.sandboxing import require_sandbox
from tests.test_sandbox import HOSTILE, hostile, play

DEALS = 2


@pytest.fixture(autouse=True)
def _sandbox_needed() -> None:
    require_sandbox()


def _probe(folder: Path) -> Path:
    compiler = shutil.which("gcc") or shutil.which("cc")
    if platform.machine() != "x86_64" or compiler is None:
        pytest.skip("the Flush+Reload timer needs x86-64 and a C compiler")
    if not Path(FlushReload.LIBC).exists():
        pytest.skip(f"no {FlushReload.LIBC} to map")
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / "cache_probe.so"
    source = HOSTILE.with_name("cache_probe.c")
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(probe), str(source)], check=True)
    return probe


ATTEMPTS = 3
"""Plays measured before the channel is called closed: a cache timing is the machine's
too, and a busy machine (a CI run's other tests on both cores) can drown one play's."""
DROWNED = 0.1
"""Free cards' lines loading fast this often (half again as often as measured quiet): the
cache is others' (:meth:`_Figure.drowned`)."""


def test_partners_read_a_hand_through_the_cpu_caches(tmp_path: Path) -> None:
    figures = []
    for attempt in range(ATTEMPTS):
        figure = _one_play(tmp_path / f"play-{attempt}")
        if figure.open():
            return
        figures.append(figure)
    if all(f.drowned() for f in figures):
        # Not this test's to judge: lines of cards nobody holds were cached by others.
        pytest.skip(f"other processes keep libc's lines cached here: {figures}")
    pytest.fail(f"the channel read nothing in {ATTEMPTS} plays: {figures}")


@dataclass(frozen=True)
class _Figure:
    """One play's readings: held and free cards' fast loads (fast, seen), and each deal's
    overlap."""

    held: tuple[int, int]
    free: tuple[int, int]
    overlap: list[int]

    def open(self) -> bool:
        # Open: a held card's line reads fast far more often than another's, and the
        # deal's readings together give most of the partner's hand. Measured here: 0.39 to
        # 0.46 against 0.06 to 0.07, and 7 of 10 cards a deal where a guess gets 2.5; the
        # bounds leave room for other machines.
        (held_fast, held_seen), (free_fast, free_seen) = self.held, self.free
        apart = held_fast / held_seen >= 3 * free_fast / free_seen
        return apart and sum(self.overlap) >= 5 * len(self.overlap)

    def drowned(self) -> bool:
        """Whether lines of cards nobody at the table holds loaded fast often (measured
        quiet: 0.06 to 0.07): another process on the host keeps libc's lines in the shared
        cache, and the reading measures it, not the partner (a busy CI machine: 0.42)."""
        free_fast, free_seen = self.free
        return free_fast / free_seen > DROWNED


def _one_play(folder: Path) -> _Figure:
    probe = _probe(folder / "bot")  # the manifest's folder: a bot reads only its own
    entry = hostile(folder / "bot", "cpu-cache", "--target", str(probe))
    played = play((entry, parse_entry("random")), folder, deals=DEALS)
    played.assert_played_out()
    reports = played.all_reports()
    hands = {
        (r["game"], r["deal"], r["seat"]): set(r["hand"])
        for r in reports
        if r["attack"] == "cpu-cache-hand"
    }
    readings = [r for r in reports if r["attack"] == "cpu-cache"]
    assert len(hands) == 2 * DEALS * 2, hands  # two games, two partners
    assert len(readings) >= 2 * DEALS * 2 * 5, len(readings)  # a reading nearly every trick
    # One reading: a card is held if its line loaded fast. A deal: the ten lines that
    # loaded fast most often over its readings (ties: the lower median time).
    held_fast = free_fast = held_seen = free_seen = 0
    by_deal: dict[tuple[int, int, int], list[dict[str, Any]]] = {}
    for r in readings:
        theirs = hands[(r["game"], r["deal"], r["partner"])]
        for card in CARDS:
            fast = card in r["learned"]
            if card in theirs:
                held_seen, held_fast = held_seen + 1, held_fast + fast
            else:
                free_seen, free_fast = free_seen + 1, free_fast + fast
        by_deal.setdefault((r["game"], r["deal"], r["partner"]), []).append(r)
    overlap = [len(_ten_fastest(rs) & hands[key]) for key, rs in by_deal.items()]
    return _Figure((held_fast, held_seen), (free_fast, free_seen), overlap)


def _ten_fastest(readings: list[dict[str, Any]]) -> set[str]:
    def rank(card: str) -> tuple[int, float]:
        times = [r["cycles"][CARDS.index(card)] for r in readings]
        return (-sum(card in r["learned"] for r in readings), statistics.median(times))

    return set(sorted(CARDS, key=rank)[:10])
