"""Tournament benchmarks: rating fits and bootstraps, and a whole tournament run."""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tournaments.config import TournamentConfig
from tournaments.ratings import PairResult, fit_elo, rate
from tournaments.runner import TournamentRun, open_store


@dataclass(frozen=True)
class RatingsBench:
    """Times of one rating workload."""

    entries: int
    games: int
    samples: int
    fit_seconds: float
    """Median time of one maximum-likelihood fit."""
    rate_seconds: float
    """Time of the fit plus ``samples`` bootstrap refits."""


def synthetic_results(entries: int, games: int, seed: int = 1) -> list[PairResult]:
    """``games`` games of a round robin among entries 200 Elo apart, in duplicate pairs."""
    rng = random.Random(seed)
    names = [f"e{i}" for i in range(entries)]
    strength = {n: 200.0 * i for i, n in enumerate(names)}
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    out: list[PairResult] = []
    k = 0
    while len(out) < games:
        a, b = pairs[k % len(pairs)]
        p = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
        for _ in range(2):  # a duplicate set: both games share its key
            u = rng.random()
            score = 1.0 if u < p * 0.9 else 0.5 if u < p * 0.9 + 0.1 else 0.0
            out.append(PairResult(f"s{k}", a, b, score))
        k += 1
    return out[:games]


def bench_ratings(entries: int, games: int, samples: int, rounds: int = 5) -> RatingsBench:
    """Time ``fit_elo`` (median of ``rounds``) and ``rate`` with ``samples`` resamples."""
    results = synthetic_results(entries, games)
    fits = []
    for _ in range(rounds):
        start = time.perf_counter()
        fit_elo(results)
        fits.append(time.perf_counter() - start)
    start = time.perf_counter()
    rate(results, samples=samples)
    return RatingsBench(
        entries, games, samples, statistics.median(fits), time.perf_counter() - start
    )


@dataclass(frozen=True)
class TournamentBench:
    """A whole tournament, run into a fresh database."""

    games: int
    deals: int
    seconds: float
    processes: int
    """Bot processes started over the whole run."""

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds else math.inf


def bench_tournament(config: TournamentConfig, concurrency: int | None = None) -> TournamentBench:
    """Run ``config`` from nothing into a temporary database; wall time and counts."""
    with tempfile.TemporaryDirectory(prefix="tavolo-bench-") as root:
        db = Path(root) / "bench.db"
        with open_store(db, config) as store:
            run = TournamentRun(config, store, concurrency=concurrency, workdir=Path(root) / "w")
            start = time.perf_counter()
            asyncio.run(run.run())
            seconds = time.perf_counter() - start
            # Every bot process has a log folder of its own.
            processes = sum(1 for _ in (Path(root) / "w").glob("match-*/*/stderr.log"))
            return TournamentBench(store.game_count(), store.deal_count(), seconds, processes)
