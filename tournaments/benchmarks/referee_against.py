"""``tavolo bench referee --against TREE``: this checkout's referee against another's.

The same load (:mod:`tournaments.benchmarks.shards`: real ``tavolo serve`` processes, one
shard, the load generator answering at once) is played on the two builds in alternating
rounds, so that both meet the same hour: a machine's speed drifts by more than most
changes to the referee over a few minutes, and a figure from another hour says little.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from tournaments.benchmarks.round_trips import BenchError
from tournaments.benchmarks.shards import (
    LoadRun,
    LoadSettings,
    go_generator,
    load_once,
)


@dataclass(frozen=True)
class AgainstBench:
    """Alternating loads on the other tree's referee and on this one's."""

    tree: Path
    settings: LoadSettings
    other: tuple[LoadRun, ...]
    this: tuple[LoadRun, ...]

    def change(self, figure: str) -> float:
        """This build's mean of ``figure`` over the other's, less 1 (-0.25: 25% lower)."""
        return _mean(self.this, figure) / _mean(self.other, figure) - 1

    def as_json(self) -> dict[str, object]:
        def side(runs: tuple[LoadRun, ...]) -> dict[str, object]:
            return {
                "referee_cpu_us_per_decision": [round(r.cpu_us_per_decision, 1) for r in runs],
                "decisions_per_second": [round(r.decisions_per_second, 1) for r in runs],
                "spurious_timeouts": [r.spurious_timeouts for r in runs],
                "mean_referee_cpu_us_per_decision": round(_mean(runs, _CPU), 1),
                "mean_decisions_per_second": round(_mean(runs, _RATE), 1),
            }

        return {
            "benchmark": "referee_against",
            "against": str(self.tree),
            "generator": self.settings.generator,
            "tables": self.settings.tables,
            "deals": self.settings.deals,
            "rounds": len(self.this),
            "other": side(self.other),
            "this": side(self.this),
            "referee_cpu_change": round(self.change(_CPU), 3),
            "decisions_per_second_change": round(self.change(_RATE), 3),
        }

    def text(self) -> str:
        """One row a round, then the means and the change."""
        rows = [
            [k + 1, f"{o.cpu_us_per_decision:.1f}", f"{t.cpu_us_per_decision:.1f}",
             f"{o.decisions_per_second:,.0f}", f"{t.decisions_per_second:,.0f}"]
            for k, (o, t) in enumerate(zip(self.other, self.this, strict=True))
        ]  # fmt: skip
        rows.append(
            ["mean", f"{_mean(self.other, _CPU):.1f}", f"{_mean(self.this, _CPU):.1f}",
             f"{_mean(self.other, _RATE):,.0f}", f"{_mean(self.this, _RATE):,.0f}"]
        )  # fmt: skip
        headers = ["round", "referee CPU µs/decision: other", "this",
                   "decisions/s: other", "this"]  # fmt: skip
        return "\n".join([
            f"other: {self.tree}; load: {self.settings.tables} tables, "
            f"{self.settings.deals} deals a game, 1 shard, generator {self.settings.generator}",
            tabulate(rows, headers=headers, colalign=("left", *["right"] * 4)),
            "",
            f"this build: referee CPU per decision {self.change(_CPU):+.1%}, "
            f"decisions/s {self.change(_RATE):+.1%}",
        ])  # fmt: skip


_CPU = "cpu_us_per_decision"
_RATE = "decisions_per_second"


def _mean(runs: tuple[LoadRun, ...], figure: str) -> float:
    return statistics.fmean(float(getattr(r, figure)) for r in runs)


def bench_against(tree: Path, rounds: int, settings: LoadSettings) -> AgainstBench:
    """``rounds`` pairs of loads, the other tree's referee first in each (so a tree that is
    no checkout fails before any load plays: :class:`~.shards.ServeProcess` checks it)."""
    tree = tree.resolve()
    if settings.generator == "go":
        go_generator()
    other: list[LoadRun] = []
    this: list[LoadRun] = []
    for _ in range(rounds):
        other.append(load_once(1, settings, tree))
        this.append(load_once(1, settings))
    for name, runs in (("the other build", other), ("this build", this)):
        if any(r.decisions == 0 for r in runs):
            raise BenchError(f"{name}: a load played no decision")
    return AgainstBench(tree, settings, tuple(other), tuple(this))
