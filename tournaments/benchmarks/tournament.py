"""Tournament benchmarks: rating fits and bootstraps, and a whole tournament run."""

from __future__ import annotations

import asyncio
import io
import math
import os
import random
import resource
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from referee.local_play import play_match
from tournaments.concurrency import machine_times
from tournaments.config import Format, TournamentConfig
from tournaments.ratings import PairResult, fit_elo, rate
from tournaments.runner import (
    RunSettings,
    TournamentRun,
    match_config,
    match_seed,
    open_store,
    planned_pairings,
)
from tournaments.storage import Store


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
    cpu_seconds: float = 0.0
    """CPU time of this process and of the processes it waited for (the shards), with
    theirs (their bots): every process of the run that ended normally."""
    machine_cpu_seconds: float = 0.0
    """CPU time the whole machine spent over the run (``/proc/stat``): the run's and
    whatever else ran meanwhile; 0 where it cannot be read."""

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds else math.inf


def _cpu_of_the_tree() -> float:
    """CPU seconds of this process and of its descendants waited for so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def bench_tournament(
    config: TournamentConfig, concurrency: int | None = None, shards: int = 1
) -> TournamentBench:
    """Run ``config`` from nothing into a temporary database; wall time, CPU and counts."""
    with tempfile.TemporaryDirectory(prefix="tavolo-bench-") as root:
        db = Path(root) / "bench.db"
        with open_store(db, config) as store:
            settings = RunSettings(concurrency=concurrency, shards=shards, workdir=Path(root) / "w")
            run = TournamentRun(config, store, settings)
            cpu, machine = _cpu_of_the_tree(), _machine_busy()
            start = time.perf_counter()
            asyncio.run(run.run())
            seconds = time.perf_counter() - start
            cpu, machine = _cpu_of_the_tree() - cpu, _machine_busy() - machine
            # Every bot process has a log folder of its own.
            processes = sum(1 for _ in (Path(root) / "w").glob("match-*/*/stderr.log"))
            return TournamentBench(
                store.game_count(), store.deal_count(), seconds, processes, cpu, machine
            )


def _machine_busy() -> float:
    """CPU seconds the machine has been busy since boot (0 where it cannot be read)."""
    try:
        busy, _ = machine_times()
    except OSError:
        return 0.0
    return busy / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class InProcessBench:
    """The same matches with built-in players in this process: no gRPC, no processes."""

    games: int
    deals: int
    seconds: float
    cpu_seconds: float


def bench_in_process(config: TournamentConfig) -> InProcessBench:
    """Play every match ``config`` schedules with :func:`referee.local_play.play_match`,
    each record written to memory: what the games cost with no harness around them.

    ValueError for a Swiss tournament (its pairings follow results) or an entry that is
    not a built-in bot or a ``py:`` entry.
    """
    if config.format is Format.SWISS:
        raise ValueError("the in-process comparison needs a format paired in advance, not swiss")
    games = deals = 0
    cpu = time.process_time()
    start = time.perf_counter()
    for pairing in planned_pairings(config):
        seed = match_seed(config, pairing.round, pairing.entries)
        result = play_match(
            match_config(config, pairing.entries, seed, config.games), record=io.StringIO()
        )
        games += len(result.outcomes)
        deals += sum(o.deals for o in result.outcomes)
    return InProcessBench(games, deals, time.perf_counter() - start, time.process_time() - cpu)


@dataclass(frozen=True)
class ClusterBench:
    """A whole tournament run on a Dask cluster into a fresh database."""

    cluster: str
    """As ``--cluster`` takes it: ``local:N`` or a scheduler's address."""
    workers: int
    threads: int
    """Sets the workers play at once."""
    start_seconds: float
    """Connecting, or starting the LocalCluster, and checking the workers' bots."""
    games: int
    deals: int
    seconds: float
    """The run alone, from the first set submitted to the last stored."""

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds else math.inf


def bench_cluster(
    config: TournamentConfig, cluster: str, concurrency: int | None = None
) -> ClusterBench:
    """Run ``config`` from nothing on ``cluster`` (tournaments.cluster), timed apart from
    the cluster's start. ClusterError, one line, if it cannot."""
    from tournaments.cluster import ClusterTables
    from tournaments.runner import confinements, note_confinements

    modes = confinements(config)

    async def run(store: Store) -> ClusterBench:
        start = time.perf_counter()
        async with ClusterTables(cluster, config, modes) as tables:
            threads = await tables.workers()
            started = time.perf_counter()
            settings = RunSettings(concurrency=concurrency or 1024, workdir=Path(root) / "w")
            runner = TournamentRun(config, store, settings, tables=tables)
            await runner.run()
            seconds = time.perf_counter() - started
        return ClusterBench(
            cluster, len(threads), sum(threads.values()), started - start,
            store.game_count(), store.deal_count(), seconds,
        )  # fmt: skip

    with (
        tempfile.TemporaryDirectory(prefix="tavolo-bench-") as root,
        open_store(Path(root) / "bench.db", config) as store,
    ):
        note_confinements(store, modes)
        return asyncio.run(run(store))
