"""A channel that stays open, measured: the page cache of files every sandbox reads.

Every sandbox binds the host's ``/usr`` read-only, so its files' pages are cached once
for all of them. The hostile bot (``page-cache``) reads one file of a pair for each card
of its hand; its partner, frozen meanwhile, times a one-byte read of each pair at its
next decision, and the cached file answers in a microsecond where the other takes a disk
read. Eviction is refused (seccomp), so each page carries one bit, once; but ``/usr``
holds thousands of pages nobody has read. No system call of the attack can be refused
without breaking every program: it reads files and looks at a clock.

This test pins the figure docs/security.md gives. It empties the page cache of the files
it uses first, as a machine that has not read them would be; where it cannot (the pages
stay cached), it is skipped.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from referee.entries import parse_entry
from tests.bots.hostile import (
    PAGE_CACHE_DEALS,
    PAGE_CACHE_PAIRS,
    WARM_MICROSECONDS,
    page_cache_files,
    page_cache_region,
    time_first_byte,
)
from tests.sandboxing import require_sandbox
from tests.test_sandbox import hostile, play

GAMES, DEALS = 2, 2


@pytest.fixture(autouse=True)
def _sandbox_needed() -> None:
    require_sandbox()


def _evict(path: str) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)


def _files_emptied() -> list[str]:
    """The agreed files, those the match uses evicted from the page cache; skips where
    eviction does not work here."""
    files = page_cache_files()
    used = GAMES * PAGE_CACHE_DEALS * 4 * 2 * PAGE_CACHE_PAIRS
    if len(files) < used + 1:
        pytest.skip(f"/usr/share has {len(files)} files of 8 KiB or more; the attack needs {used}")
    probe = files[used]
    _evict(probe)
    if time_first_byte(probe) < WARM_MICROSECONDS:
        pytest.skip(
            "this machine's page cache cannot be emptied from here (the probe stayed cached)"
        )
    for path in files[:used]:
        _evict(path)
    time.sleep(0.1)
    return files


def test_partners_read_a_hand_through_the_page_cache(tmp_path: Path) -> None:
    files = _files_emptied()
    played = play((hostile(tmp_path / "bot", "page-cache"), parse_entry("random")), tmp_path,
                  deals=DEALS)  # fmt: skip
    played.assert_played_out()
    reports = [r for r in played.all_reports() if r["attack"] == "page-cache"]
    assert len(reports) == GAMES * DEALS * 2, reports  # each partner reads once a deal
    hands = {(r["game"], r["deal"], r["seat"]): set(r["hand"]) for r in reports}
    right = total = whole = 0
    for r in reports:
        theirs = hands[(r["game"], r["deal"], r["partner"])]
        learned = set(r["learned"])
        # A bit a card: held or not. Each pair was the files' first use since eviction.
        assert len(page_cache_region(files, r["game"], r["deal"], r["partner"])) == 80
        right += sum((c in learned) == (c in theirs) for c in _all_cards())
        total += len(_all_cards())
        whole += learned == theirs
    # Open, and wide: nearly every bit right, most hands whole, in one decision each.
    assert right / total >= 0.9, (right, total, [r["times"] for r in reports])
    assert whole >= len(reports) // 2, (whole, len(reports))


def _all_cards() -> list[str]:
    return [rank + suit for suit in "DCSB" for rank in "32AKQJ7654"]
