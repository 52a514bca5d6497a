"""The think-time channel between partners, measured with a real colluding pair, under
``tempo = free`` and ``tempo = fixed:MS``.

The hostile entry (tests/bots/hostile.py, ``tempo``) plays both seats of a side, each in a
sandbox of its own. Each sends one bit a decision by how long it thinks (5 or 65 ms) and
reads its partner's off the time between its own answer and its next request, which
spans exactly one of its partner's decisions. The test decodes each such interval by
the median of them all, as a receiver that knows nothing would, and gives the bits a
play that the channel carried (the capacity of a binary symmetric channel with that
error rate). ``-s`` prints the figures (docs/security.md).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path
from statistics import median
from typing import Any

import pytest

from referee.entries import parse_entry
from referee.match.config import parse_tempo, tempo_text
from tests.sandboxing import require_sandbox
from tests.test_sandbox import LIMITS, hostile, play


@pytest.fixture(autouse=True)
def _sandbox_needed() -> None:
    require_sandbox()


def _received(reports: list[dict[str, Any]]) -> list[tuple[int, float]]:
    """(partner's bit, interval) for each of a receiver's intervals that spans exactly one
    decision of its partner."""
    out = []
    for game in {r["game"] for r in reports}:
        by_slot: dict[int, list[dict[str, Any]]] = {}
        for r in sorted((r for r in reports if r["game"] == game), key=lambda r: r["t"]):
            by_slot.setdefault(r["slot"], []).append(r)
        for receiver, own in by_slot.items():
            partner = [r for slot, rs in by_slot.items() if slot != receiver for r in rs]
            for answered, next_asked in itertools.pairwise(own):
                start, end = answered["t"], next_asked["asked"]
                inside = [p for p in partner if start < p["t"] < end]
                if len(inside) == 1:
                    out.append((inside[0]["bit"], end - start))
    return out


def _bits_per_play(samples: list[tuple[int, float]]) -> tuple[float, float]:
    """The receiver's accuracy, deciding by the median interval, and the channel's
    capacity in bits a play."""
    cut = median(interval for _, interval in samples)
    right = sum((interval > cut) == bool(bit) for bit, interval in samples) / len(samples)
    p = min(right, 1 - right)  # a receiver may swap its reading
    entropy = 0.0 if p == 0 else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
    return right, 1 - entropy


def _measure(tmp_path: Path, tempo: str) -> tuple[int, float, float]:
    limits = dataclasses.replace(LIMITS, deadline_ms=1000, tempo_ms=parse_tempo(tempo))
    played = play(
        (hostile(tmp_path / "bot", "tempo"), parse_entry("random")), tmp_path,
        deals=3, limits=limits,
    )  # fmt: skip
    played.assert_played_out()
    samples = _received([r for r in played.all_reports() if r["attack"] == "tempo"])
    right, bits = _bits_per_play(samples)
    print(f"tempo {tempo_text(limits.tempo_ms)}: {len(samples)} plays, {right:.2f} read right, "
          f"{bits:.2f} bits a play")  # fmt: skip
    return len(samples), right, bits


def test_think_time_carries_bits_under_free_tempo_and_none_under_fixed(tmp_path: Path) -> None:
    count, right, bits = _measure(tmp_path / "free", "free")
    assert count >= 60 and right >= 0.9 and bits >= 0.5  # the channel is there, so this
    count, right, bits = _measure(tmp_path / "fixed", "fixed:100")
    assert count >= 60 and right <= 0.75 and bits <= 0.2
