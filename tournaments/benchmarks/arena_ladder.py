"""How many games the arena's ladder needs to rank submissions of known strength in the
right order, against round robin at the same number of games.

Synthetic: ``n`` submissions whose true Elo is spaced ``gap`` apart play duplicate sets
(two games each, no draws) whose results are drawn from the Elo model with their true
ratings, so that the order they should come in is known. The ladder pairs as the arena
does (:func:`tournaments.arena.ladder.choose_pair` over the running fit); round robin plays
every pair in turn, shuffled once. After each ``checkpoint`` meetings the fit of all games
so far is compared with the true order; the figure is the number of games after which it
is right at that checkpoint and at every later one up to ``meetings``.

This one measures the pairing alone, with nothing else varying; :mod:`.arena_real_order`
does the same with real bots of known strength playing real games.
"""

from __future__ import annotations

import itertools
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from tournaments.arena.ladder import choose_pair, current_elo, expected, games_and_meetings
from tournaments.ratings import PairResult, RatingsError, fit_elo


@dataclass(frozen=True)
class OrderRun:
    """One run of one scheme."""

    scheme: str
    games_to_order: int | None
    """Games after which the fit's order is right and stays right; None if never within
    the run."""


def _play(
    a: int, b: int, strength: list[float], rng: random.Random, meeting: int
) -> list[PairResult]:
    p = expected(strength[a], strength[b])
    return [
        PairResult(f"{meeting}:1", str(a), str(b), 1.0 if rng.random() < p else 0.0)
        for _ in range(2)
    ]


def _ordered(results: list[PairResult], n: int) -> bool:
    try:
        elo = fit_elo(results)
    except RatingsError:
        return False
    if len(elo) < n:
        return False
    ranked = sorted(range(n), key=lambda s: -elo[str(s)])
    return ranked == list(range(n))


def run_scheme(
    scheme: str, n: int, gap: float, meetings: int, checkpoint: int, seed: int
) -> OrderRun:
    """One synthetic run: ``scheme`` is ``ladder`` or ``round-robin``."""
    outcomes = random.Random(f"outcomes/{seed}")
    # Submission 0 is the strongest.
    strength = [1500.0 + gap * (n - 1 - i) for i in range(n)]

    def play(a: int, b: int, number: int) -> list[PairResult]:
        return _play(a, b, strength, outcomes, number)

    return order_run(scheme, n, meetings, checkpoint, seed, play)


def order_run(
    scheme: str,
    n: int,
    meetings: int,
    checkpoint: int,
    seed: int,
    play: Callable[[int, int, int], list[PairResult]],
) -> OrderRun:
    """Meetings of submissions ``0..n-1`` (0 the strongest, in the true order), each
    ``play(a, b, number)``'s results, paired by ``scheme``: the arena's ladder, or round
    robin (every pair in turn, shuffled once by ``seed``)."""
    rng = random.Random(f"{scheme}/{seed}")
    pairs = list(itertools.combinations(range(n), 2))
    rng.shuffle(pairs)
    results: list[PairResult] = []
    right_since: int | None = None
    nxt: Callable[[int], tuple[int, int]]
    if scheme == "ladder":

        def nxt(number: int) -> tuple[int, int]:
            games, met = games_and_meetings(results)
            elo = current_elo(results)
            pair = choose_pair(list(range(n)), games, met, elo, number)
            assert pair is not None
            return pair

    else:

        def nxt(number: int) -> tuple[int, int]:
            return pairs[(number - 1) % len(pairs)]

    for number in range(1, meetings + 1):
        a, b = nxt(number)
        results += play(a, b, number)
        if number % checkpoint == 0:
            if _ordered(results, n):
                right_since = len(results) if right_since is None else right_since
            else:
                right_since = None
    return OrderRun(scheme, right_since)


def bench_order(
    n: int = 20, gap: float = 40.0, meetings: int = 1500, checkpoint: int = 25, runs: int = 5
) -> dict[str, list[int | None]]:
    """Games to the right order, per run, for the ladder and for round robin."""
    out: dict[str, list[int | None]] = {"ladder": [], "round-robin": []}
    for seed in range(runs):
        for scheme in out:
            run = run_scheme(scheme, n, gap, meetings, checkpoint, seed)
            out[scheme].append(run.games_to_order)
    return out


def median_or_none(values: list[int | None]) -> float | None:
    """The median of the runs that got there; None if fewer than half did."""
    got = [v for v in values if v is not None]
    return statistics.median(got) if len(got) * 2 > len(values) else None
