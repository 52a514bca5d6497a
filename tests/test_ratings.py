"""Elo by maximum likelihood, bootstrap intervals and LOS (tournaments.ratings)."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tournaments.ratings as ratings_module
from tournaments.ratings import (
    PairResult,
    RatingsError,
    fit_elo,
    los_from_counts,
    rate,
)

ELO_PER_LOGIT = 400 / math.log(10)


def match(a: str, b: str, wins: int, draws: int, losses: int, key: str = "") -> list[PairResult]:
    """``a``'s wins, draws and losses against ``b``, each game its own set unless ``key``."""
    scores = [1.0] * wins + [0.5] * draws + [0.0] * losses
    return [PairResult(key or f"{a}-{b}-{n}", a, b, score) for n, score in enumerate(scores)]


def expected(ra: float, rb: float) -> float:
    return 1 / (1 + 10 ** ((rb - ra) / 400))


# -- hand-computed examples ------------------------------------------------------------------


def test_two_entries_pure_mle():
    # A scores 7/10: the MLE solves 1/(1+10^(-D/400)) = 0.7, so D = A-B = 400·log10(7/3)
    # = 400 × 0.367977 = 147.1907; with mean 1500, A = 1500 + D/2 = 1573.5954 and
    # B = 1500 - D/2 = 1426.4046.
    elo = fit_elo(match("A", "B", 7, 0, 3), prior_draws=0)
    assert elo["A"] == pytest.approx(1573.5954, abs=1e-4)
    assert elo["B"] == pytest.approx(1426.4046, abs=1e-4)
    assert elo["A"] - elo["B"] == pytest.approx(400 * math.log10(7 / 3), abs=1e-9)


def test_a_draw_is_half_a_win():
    # 6 wins, 2 draws, 2 losses is also 7/10, so the same ratings.
    assert fit_elo(match("A", "B", 6, 2, 2), prior_draws=0) == pytest.approx(
        fit_elo(match("A", "B", 7, 0, 3), prior_draws=0), abs=1e-9
    )


def test_two_entries_with_one_prior_draw():
    # One virtual draw: A scores 7.5/11, so A-B = 400·log10(7.5/3.5) = 400 × 0.330993
    # = 132.3973 and A = 1500 + 66.1986 = 1566.1986.
    elo = fit_elo(match("A", "B", 7, 0, 3))
    assert elo["A"] - elo["B"] == pytest.approx(400 * math.log10(7.5 / 3.5), abs=1e-9)
    assert elo["A"] == pytest.approx(1566.1986, abs=1e-4)


def test_two_entries_anchored():
    # B fixed at 1500, so A = 1500 + 147.1907.
    elo = fit_elo(match("A", "B", 7, 0, 3), anchor="B", prior_draws=0)
    assert elo["B"] == 1500.0
    assert elo["A"] == pytest.approx(1647.1907, abs=1e-4)


def test_symmetric_cycle_is_all_equal():
    # A beats B, B beats C and C beats A by 2-1: at equal ratings each entry expects 3 of
    # its 6 games and scores 2 + 1 = 3, so the score equations hold there.
    results = match("A", "B", 2, 0, 1) + match("B", "C", 2, 0, 1) + match("C", "A", 2, 0, 1)
    for prior in (0.0, 1.0):
        for value in fit_elo(results, prior_draws=prior).values():
            assert value == pytest.approx(1500.0, abs=1e-9)


def test_chain_is_decided_pair_by_pair():
    # A tree of games (A-B, B-C) leaves one free difference per edge, so each pair's MLE is
    # exact: A-B = 400·log10(8/2) = 240.8240 and B-C = 400·log10(6/4) = 70.4365. The mean
    # is 1500: 3B + 240.8240 - 70.4365 = 4500, so B = 1443.2042, A = 1684.0282 and
    # C = 1372.7677.
    results = match("A", "B", 8, 0, 2) + match("B", "C", 6, 0, 4)
    elo = fit_elo(results, prior_draws=0)
    assert elo["A"] == pytest.approx(1684.0282, abs=1e-4)
    assert elo["B"] == pytest.approx(1443.2042, abs=1e-4)
    assert elo["C"] == pytest.approx(1372.7677, abs=1e-4)
    # With one prior draw per pair: 8.5/11 and 6.5/11.
    elo = fit_elo(results)
    assert elo["A"] - elo["B"] == pytest.approx(400 * math.log10(8.5 / 2.5), abs=1e-9)
    assert elo["B"] - elo["C"] == pytest.approx(400 * math.log10(6.5 / 4.5), abs=1e-9)


def test_prior_applies_only_to_pairs_that_met():
    # If A-C got virtual draws too, they would pull A and C together; in a chain they must not.
    results = match("A", "B", 9, 0, 1) + match("B", "C", 9, 0, 1)
    elo = fit_elo(results, prior_draws=2)
    assert elo["A"] - elo["B"] == pytest.approx(400 * math.log10(10 / 2), abs=1e-9)
    assert elo["B"] - elo["C"] == pytest.approx(400 * math.log10(10 / 2), abs=1e-9)


# -- random pools: an independent check and invariants ---------------------------------------

NAMES = ("ada", "bo", "cy", "dee", "eve", "flo")


@st.composite
def pools(draw: st.DrawFn, min_entries: int = 2, max_entries: int = 5) -> list[PairResult]:
    """A connected pool: a random spanning tree of pairs plus random extra pairs."""
    k = draw(st.integers(min_entries, max_entries))
    names = list(NAMES[:k])
    edges = {tuple(sorted((names[i], names[draw(st.integers(0, i - 1))]))) for i in range(1, k)}
    extra = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names)), max_size=6))
    edges |= {tuple(sorted(e)) for e in extra if e[0] != e[1]}
    results: list[PairResult] = []
    for n, (a, b) in enumerate(sorted(edges)):
        # Every pair has a draw, so the pure MLE (prior_draws=0) is finite too.
        wins, draws, losses = draw(
            st.tuples(st.integers(0, 6), st.integers(1, 4), st.integers(0, 6))
        )
        for g, score in enumerate([1.0] * wins + [0.5] * draws + [0.0] * losses):
            key = f"s{draw(st.integers(0, 5))}" if draw(st.booleans()) else f"p{n}g{g}"
            results.append(
                PairResult(key, a, b, score) if g % 2 else PairResult(key, b, a, 1 - score)
            )
    return results


def tallies(results: Sequence[PairResult], prior: float) -> dict[tuple[str, str], list[float]]:
    out: dict[tuple[str, str], list[float]] = {}
    for r in results:
        a, b, s = (r.a, r.b, r.score_a) if r.a < r.b else (r.b, r.a, 1 - r.score_a)
        cell = out.setdefault((a, b), [prior, prior / 2])
        cell[0] += 1
        cell[1] += s
    return out


def crude_fit(results: Sequence[PairResult], prior: float) -> dict[str, float]:
    """Coordinate ascent: each entry in turn moves to its 1-D optimum, found by bisection.

    The log-likelihood's derivative in one rating is (actual - expected score), which falls
    as that rating rises, so bisection on its sign finds the 1-D maximum.
    """
    pairs = tallies(results, prior)
    elo = {name: 1500.0 for pair in pairs for name in pair}
    for _ in range(2000):
        moved = 0.0
        for name in elo:

            def surplus(r: float, name: str = name) -> float:
                total = 0.0
                for (a, b), (games, score) in pairs.items():
                    if a == name:
                        total += score - games * expected(r, elo[b])
                    elif b == name:
                        total += games - score - games * expected(r, elo[a])
                return total

            lo, hi = elo[name] - 2000, elo[name] + 2000
            while hi - lo > 1e-9:
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if surplus(mid) > 0 else (lo, mid)
            moved = max(moved, abs((lo + hi) / 2 - elo[name]))
            elo[name] = (lo + hi) / 2
        if moved < 1e-7:
            break
    mean = sum(elo.values()) / len(elo)
    return {name: value - mean + 1500 for name, value in elo.items()}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pools(), st.sampled_from((0.0, 0.5, 1.0, 3.0)))
def test_score_equations_hold_at_the_mle(results, prior):
    elo = fit_elo(results, prior_draws=prior)
    actual = dict.fromkeys(elo, 0.0)
    wanted = dict.fromkeys(elo, 0.0)
    for (a, b), (games, score) in tallies(results, prior).items():
        p = expected(elo[a], elo[b])
        actual[a] += score
        actual[b] += games - score
        wanted[a] += games * p
        wanted[b] += games * (1 - p)
    for name in elo:
        assert actual[name] == pytest.approx(wanted[name], abs=1e-8)
    assert math.fsum(elo.values()) / len(elo) == pytest.approx(1500.0, abs=1e-9)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pools(max_entries=4), st.sampled_from((0.0, 1.0)))
def test_agrees_with_a_crude_independent_optimizer(results, prior):
    fast = fit_elo(results, prior_draws=prior)
    slow = crude_fit(results, prior)
    for name, value in fast.items():
        assert value == pytest.approx(slow[name], abs=0.01)


@settings(max_examples=40, deadline=None)
@given(pools(), st.randoms(use_true_random=False))
def test_renaming_entries_permutes_ratings(results, rnd):
    names = sorted({r.a for r in results} | {r.b for r in results})
    new = [f"x{n}" for n in range(len(names))]
    rnd.shuffle(new)
    rename = dict(zip(names, new, strict=True))
    renamed = [PairResult(r.set_key, rename[r.a], rename[r.b], r.score_a) for r in results]
    before, after = fit_elo(results), fit_elo(renamed)
    for name in names:
        assert after[rename[name]] == pytest.approx(before[name], abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(pools(), st.randoms(use_true_random=False))
def test_swapping_sides_changes_nothing(results, rnd):
    swapped = [
        PairResult(r.set_key, r.b, r.a, 1 - r.score_a) if rnd.random() < 0.5 else r for r in results
    ]
    assert fit_elo(swapped) == pytest.approx(fit_elo(results), abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(pools(), st.floats(-3000, 3000), st.data())
def test_anchor_is_a_translation(results, anchor_elo, data):
    free = fit_elo(results, anchor_elo=anchor_elo)
    assert math.fsum(free.values()) / len(free) == pytest.approx(anchor_elo, abs=1e-8)
    anchor = data.draw(st.sampled_from(sorted(free)))
    fixed = fit_elo(results, anchor=anchor, anchor_elo=anchor_elo)
    assert fixed[anchor] == anchor_elo
    for name, value in free.items():
        assert fixed[name] == pytest.approx(value - free[anchor] + anchor_elo, abs=1e-8)


def test_lopsided_pairs_still_converge():
    # 100-0 with a tiny prior: 100.0000000005 / 0.0000000005 gives A-B = 4520.41 Elo, where
    # p and 1 - p differ by eleven orders of magnitude.
    elo = fit_elo(match("A", "B", 100, 0, 0), prior_draws=1e-9)
    assert elo["A"] - elo["B"] == pytest.approx(400 * math.log10((100 + 5e-10) / 5e-10), abs=1e-6)
    # A chain of three such pairs is still a tree, so each difference is exact.
    results = match("A", "B", 100, 0, 0) + match("B", "C", 0, 0, 100) + match("C", "D", 100, 0, 0)
    elo = fit_elo(results, prior_draws=1e-6)
    step = 400 * math.log10((100 + 5e-7) / 5e-7)
    assert elo["A"] - elo["B"] == pytest.approx(step, abs=1e-6)
    assert elo["C"] - elo["B"] == pytest.approx(step, abs=1e-6)
    assert elo["C"] - elo["D"] == pytest.approx(step, abs=1e-6)


def test_scaling_every_count_keeps_the_pure_mle():
    # Without a prior the MLE depends only on each pair's score share: 7000/10000 is 7/10.
    few = fit_elo(match("A", "B", 7, 0, 3), prior_draws=0)
    many = fit_elo(match("A", "B", 7000, 0, 3000), prior_draws=0)
    assert many == pytest.approx(few, abs=1e-9)


# -- bootstrap and LOS -----------------------------------------------------------------------


def simulated(sets: int, strengths: dict[str, float], seed: int = 1) -> list[PairResult]:
    """Every pair plays a duplicate pair of games in each set, 30% draws."""
    rng = random.Random(seed)
    names = sorted(strengths)
    out = []
    for s in range(sets):
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                for _ in range(2):
                    if rng.random() < 0.3:
                        score = 0.5
                    else:
                        score = 1.0 if rng.random() < expected(strengths[a], strengths[b]) else 0.0
                    out.append(PairResult(f"set{s}", a, b, score))
    return out


def test_rate_gives_sorted_ratings_with_intervals_around_them():
    results = simulated(200, {"A": 1600, "B": 1500, "C": 1400})
    ratings = rate(results, samples=300, seed=3)
    assert [r.name for r in ratings.ratings] == ["A", "B", "C"]
    assert ratings.samples == 300 and ratings.level == 0.95
    point = fit_elo(results)
    for r in ratings.ratings:
        assert r.elo == point[r.name]
        assert r.ci_low < r.elo < r.ci_high
        assert r.ci_high - r.ci_low < 60
    assert ratings.los("A", "C") == 1.0
    assert ratings.los("C", "A") == 0.0


def test_interval_width_matches_the_fisher_information():
    # 400 independent games at a 60% score: the MLE of the difference D has standard error
    # (400/ln 10) / sqrt(n p (1-p)) = 173.72 / sqrt(400 × 0.24) = 17.73 Elo; with the mean
    # fixed, A = mean + D/2 has half of it, so the 95% interval is about 2 × 1.96 × 8.87
    # = 34.8 Elo wide.
    results = match("A", "B", 240, 0, 160)
    width = 2 * 1.959964 * ELO_PER_LOGIT / math.sqrt(400 * 0.6 * 0.4) / 2
    ratings = rate(results, samples=2000, seed=5)
    for r in ratings.ratings:
        assert r.ci_high - r.ci_low == pytest.approx(width, rel=0.06)


def test_bootstrap_keeps_a_sets_games_together():
    # The same 400 games, once as 200 duplicate pairs with identical results and once one
    # game per set. Resampling whole sets sees the correlation: its interval is about
    # sqrt(2) times wider.
    games = []
    for n in range(200):
        score = 1.0 if n < 120 else 0.0
        games += [(f"pair{n}", score), (f"pair{n}", score)]
    paired = [PairResult(key, "A", "B", s) for key, s in games]
    single = [PairResult(f"game{n}", "A", "B", s) for n, (_, s) in enumerate(games)]
    wide = rate(paired, samples=1000, seed=2).ratings[0]
    narrow = rate(single, samples=1000, seed=2).ratings[0]
    ratio = (wide.ci_high - wide.ci_low) / (narrow.ci_high - narrow.ci_low)
    assert ratio == pytest.approx(math.sqrt(2), rel=0.15)


def test_bootstrap_is_deterministic_for_a_seed_and_ignores_input_order():
    results = simulated(30, {"A": 1520, "B": 1500, "C": 1480})
    first = rate(results, samples=100, seed=7)
    shuffled = list(results)
    random.Random(0).shuffle(shuffled)
    again = rate(shuffled, samples=100, seed=7)
    assert first == again
    assert [first.los(a, b) for a in "ABC" for b in "ABC"] == [
        again.los(a, b) for a in "ABC" for b in "ABC"
    ]
    other = rate(results, samples=100, seed=8)
    assert other.ratings != first.ratings


@settings(max_examples=20, deadline=None)
@given(pools(max_entries=4), st.integers(0, 2**32))
def test_los_is_complementary(results, seed):
    ratings = rate(results, samples=40, seed=seed)
    names = [r.name for r in ratings.ratings]
    for a in names:
        assert ratings.los(a, a) == 0.5
        for b in names:
            assert ratings.los(a, b) + ratings.los(b, a) == pytest.approx(1.0, abs=1e-12)
            assert 0.0 <= ratings.los(a, b) <= 1.0


def test_los_counts_ties_half():
    # A and B drew every game, so every replicate rates them exactly equal.
    ratings = rate(match("A", "B", 0, 20, 0), samples=50)
    assert ratings.los("A", "B") == 0.5


def test_anchor_entry_has_no_spread():
    ratings = rate(simulated(40, {"A": 1550, "B": 1500, "C": 1450}), anchor="B", samples=50)
    b = next(r for r in ratings.ratings if r.name == "B")
    assert b.elo == b.ci_low == b.ci_high == 1500.0
    a = next(r for r in ratings.ratings if r.name == "A")
    assert a.ci_low < a.ci_high


def test_a_replicate_that_misses_a_pair_keeps_that_pairs_prior():
    # Two sets form a chain A-B-C. A replicate that draws s1 twice has no B-C game: B-C is
    # then held by its prior's one virtual draw alone, and the replicate is rated, not
    # redrawn. Before, only replicates holding both sets once were kept, which is the
    # original data: the intervals collapsed onto the point, a 1-0 shown as certain.
    results = match("A", "B", 1, 0, 0, key="s1") + match("B", "C", 1, 0, 0, key="s2")
    ratings = rate(results, samples=200, seed=1)
    by_name = {r.name: r for r in ratings.ratings}
    for r in ratings.ratings:
        assert r.ci_low < r.elo - 20 or r.ci_high > r.elo + 20, r
    # C lost its only game: in a replicate of s1 twice, C meets B through the prior only,
    # and rates higher than in the data.
    assert by_name["C"].ci_high > by_name["C"].elo + 20


def test_a_gauntlet_of_one_set_a_pair_is_rated():
    # A candidate against eight others, one set each: with the prior on every pair, every
    # replicate is connected (before, 8!/8^8 of them were, and the run failed at its end).
    others = [f"e{n}" for n in range(8)]
    results = [PairResult(f"s{n}", "cand", o, 1.0 if n % 3 else 0.0) for n, o in enumerate(others)]
    ratings = rate(results, samples=200)
    assert ratings.samples == 200
    assert all(r.ci_low < r.elo < r.ci_high for r in ratings.ratings if r.name != "cand")


def test_too_many_disconnected_replicates_give_up():
    # Without a prior, a chain of nine entries held together by eight one-game sets: a
    # replicate keeps all eight with probability 8!/8^8 ≈ 0.24%, far too rarely for 50
    # replicates in 500 draws.
    names = [f"e{n}" for n in range(9)]
    results = [PairResult(f"s{n}", a, b, 0.5) for n, (a, b) in enumerate(itertools.pairwise(names))]
    with pytest.raises(RatingsError, match="bootstrap"):
        rate(results, samples=50, prior_draws=0)


def test_samples_zero_gives_point_intervals_and_no_los():
    ratings = rate(match("A", "B", 6, 2, 2), samples=0)
    assert ratings.samples == 0
    for r in ratings.ratings:
        assert r.ci_low == r.elo == r.ci_high
    with pytest.raises(RatingsError, match="no bootstrap samples"):
        ratings.los("A", "B")


def test_rate_argument_errors():
    results = match("A", "B", 6, 2, 2)
    with pytest.raises(RatingsError, match="unknown entry"):
        rate(results, samples=10).los("A", "Z")
    with pytest.raises(RatingsError, match="samples"):
        rate(results, samples=-1)
    with pytest.raises(RatingsError, match="level"):
        rate(results, level=1.0)
    with pytest.raises(RatingsError, match="prior_draws"):
        rate(results, prior_draws=-1)


def test_pure_mle_replicate_that_is_infinite_is_an_error():
    # 3-1 is finite, but some replicates hold only A's wins.
    with pytest.raises(RatingsError, match=r"bootstrap replicate.*every game"):
        rate(match("A", "B", 3, 0, 1), prior_draws=0, samples=50)


# -- los_from_counts -------------------------------------------------------------------------


def test_los_from_counts():
    # 60 wins, 40 losses: (60-40)/sqrt(2·100) = sqrt 2, and 0.5·(1 + erf(sqrt 2)) = Φ(2)
    # = 0.977250.
    assert los_from_counts(60, 40) == pytest.approx(0.977250, abs=1e-6)
    assert los_from_counts(40, 60) == pytest.approx(1 - 0.977250, abs=1e-6)
    assert los_from_counts(0, 0) == 0.5
    assert los_from_counts(7, 7) == 0.5
    assert los_from_counts(5, 0) == pytest.approx(0.5 * (1 + math.erf(5 / math.sqrt(10))))
    with pytest.raises(RatingsError):
        los_from_counts(-1, 3)


# -- errors ----------------------------------------------------------------------------------


def test_disconnected_pool_is_an_error():
    results = match("A", "B", 3, 1, 1) + match("C", "D", 2, 2, 2)
    with pytest.raises(RatingsError, match=r"do not all connect.*A, B \| C, D"):
        fit_elo(results)


def test_perfect_score_without_prior_is_an_error():
    with pytest.raises(RatingsError, match="A won every game"):
        fit_elo(match("A", "B", 5, 0, 0) + match("B", "C", 2, 1, 2), prior_draws=0)
    # A and B drew each other and beat C in every game: only C stands out.
    results = match("A", "B", 0, 2, 0) + match("A", "C", 3, 0, 0) + match("B", "C", 3, 0, 0)
    with pytest.raises(RatingsError, match="C lost every game"):
        fit_elo(results, prior_draws=0)
    # Two groups, each balanced inside, one beating the other in every game.
    results = (
        match("A", "B", 0, 2, 0)
        + match("C", "D", 1, 0, 1)
        + match("A", "C", 2, 0, 0)
        + match("B", "D", 2, 0, 0)
    )
    with pytest.raises(RatingsError, match="A, B won every game against the other entries"):
        fit_elo(results, prior_draws=0)
    # The same pools are finite with the default prior.
    assert fit_elo(results)["A"] > fit_elo(results)["C"]


def test_unknown_anchor_is_an_error():
    with pytest.raises(RatingsError, match="anchor 'Z'"):
        fit_elo(match("A", "B", 1, 1, 1), anchor="Z")


@pytest.mark.parametrize("score", [0.25, 2.0, -1.0, float("nan")])
def test_bad_score_is_an_error(score):
    with pytest.raises(RatingsError, match="score_a"):
        fit_elo([PairResult("s", "A", "B", 1.0), PairResult("s", "A", "B", score)])


def test_other_input_errors():
    with pytest.raises(RatingsError, match="no results"):
        fit_elo([])
    with pytest.raises(RatingsError, match="cannot play itself"):
        fit_elo([PairResult("s", "A", "A", 0.5)])
    assert issubclass(RatingsError, ValueError)


def test_few_sets_that_all_end_alike_do_not_give_a_certain_interval() -> None:
    # Two sets, each won 2-0 by A: every bootstrap replicate is the data itself, so the
    # percentile interval was +0 / +0. By hand, with the one virtual draw: A scores 4.5 of
    # 5, p = 0.9, the difference d = ln 9 in log-odds; the curvature is 5 p (1 - p) = 0.45,
    # so Var(d) = 1 / 0.45 and each entry's distance from the mean, d / 2, has variance
    # 1 / 1.8: 0.745 in log-odds, 129.5 Elo; 95% is 1.96 of those, 253.8 Elo.
    results = [PairResult(f"s{n // 2}", "A", "B", 1.0) for n in range(4)]
    ratings = rate(results, samples=200)
    by_name = {r.name: r for r in ratings.ratings}
    half = 1.959964 * math.sqrt(1 / 1.8) / (math.log(10) / 400)
    for r in by_name.values():
        assert r.ci_high - r.elo == pytest.approx(half, abs=0.05)
        assert r.elo - r.ci_low == pytest.approx(half, abs=0.05)
    assert by_name["A"].elo - by_name["B"].elo == pytest.approx(400 * math.log10(9))


def test_many_sets_keep_the_bootstrap_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    # Twelve sets of two games, mostly split between the two seatings: the duplicate
    # bootstrap sees how little the sets vary (about ±28 Elo); the curvature's normal
    # interval counts every game as independent (about ±68). From FEW_SETS sets on, the
    # bootstrap alone.
    sets = [(1, 0), (1, 0.5), (0.5, 0), (1, 0), (0, 0.5), (1, 0), (0.5, 0.5), (1, 0),
            (0, 1), (1, 0.5), (1, 0), (0.5, 0)]  # fmt: skip
    results = [PairResult(f"s{n}", "A", "B", float(v)) for n, game in enumerate(sets) for v in game]
    alone = rate(results, samples=300)
    monkeypatch.setattr(ratings_module, "FEW_SETS", 100)
    widened = rate(results, samples=300)
    for a, w in zip(alone.ratings, widened.ratings, strict=True):
        assert a.elo == w.elo
        assert w.ci_high - w.elo > a.ci_high - a.elo > 0
