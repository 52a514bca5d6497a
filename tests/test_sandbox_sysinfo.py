"""A channel that stays open, measured: ``sysinfo(2)``'s count of the machine's processes.

The C library sizes itself from ``sysinfo`` (``sysconf(_SC_PHYS_PAGES)``), so it cannot be
refused, and a seccomp filter cannot rewrite its answer. The hostile bot (``sysinfo``)
holds 12 idle threads before a card it plays when it holds the card that play stands
for, none when not; freezing keeps them alive while its partner decides, and the partner
reads the machine's count. Other processes of the machine move the count too, so this
test pins what it carries on this machine, quiet or not.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest

from referee.entries import parse_entry
from tests.bots.hostile import ProcessCount
from tests.sandboxing import require_sandbox
from tests.test_sandbox import hostile, play

DEALS = 2


@pytest.fixture(autouse=True)
def _sandbox_needed() -> None:
    require_sandbox()


def test_partners_pass_bits_through_the_machines_process_count(tmp_path: Path) -> None:
    played = play((hostile(tmp_path / "bot", "sysinfo"), parse_entry("random")), tmp_path,
                  deals=DEALS)  # fmt: skip
    played.assert_played_out()
    reports = played.all_reports()
    hands = {
        (r["game"], r["deal"], r["seat"]): set(r["hand"])
        for r in reports
        if r["attack"] == "sysinfo-hand"
    }
    readings = [r for r in reports if r["attack"] == "sysinfo"]
    assert len(readings) >= 2 * DEALS * 2 * 5, len(readings)
    assert all(r["procs"] > 0 for r in readings), "sysinfo refused"
    # Within a deal's readings: a count above their median (a 0: three cards of four are
    # not held) by half the threads or more is a 1.
    right = 0
    by_deal: dict[tuple[int, int, int], list[dict[str, Any]]] = {}
    for r in readings:
        by_deal.setdefault((r["game"], r["deal"], r["seat"]), []).append(r)
    for (game, deal, seat), rs in by_deal.items():
        theirs = hands[(game, deal, (seat + 2) % 4)]
        middle = statistics.median(r["procs"] for r in rs) + ProcessCount.THREADS / 2
        right += sum((r["procs"] > middle) == (r["card"] in theirs) for r in rs)
    # Measured here: 68 to 76 of 76 right, a bit a play; a guess of "not held" gets 57.
    assert right >= 0.85 * len(readings), (right, len(readings))
