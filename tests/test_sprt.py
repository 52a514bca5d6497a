"""Pentanomial counts and the normalized-Elo GSPRT (tournaments.sprt)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.ratings import PairResult
from tournaments.sprt import SprtState, bounds, llr, parse_bounds, pentanomial, sprt

# -- an independent route to the LLR ---------------------------------------------------------
#
# The module follows Van den Bergh's fixed-point iteration (section 4.1). Here the same
# generalized LLR is found by brute profiling instead: for a pair-score mean mu, the t-value
# t = (mu - 1/2) / sigma fixes the variance, and the most likely distribution with that mean
# and variance comes from the convex dual min_l -sum q_i log(1 + l·g_i), g_i = (a_i - mu,
# (a_i - mu)^2 - var), solved by damped Newton; a golden-section search over mu then finds
# the best mu. LLR = N · (best log-likelihood at t1 - best at t0).

SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
NELO_PER_T = 800 / math.log(10)


def dual_minimum(q: Sequence[float], g: Sequence[Sequence[float]]) -> float:
    dim = len(g[0])
    lam = [0.0] * dim

    def value(point: Sequence[float]) -> float:
        total = 0.0
        for qi, gi in zip(q, g, strict=True):
            z = 1 + sum(a * b for a, b in zip(point, gi, strict=True))
            if z <= 0:
                return math.inf
            total -= qi * math.log(z)
        return total

    current = value(lam)
    for _ in range(200):
        grad = [0.0] * dim
        hess = [[0.0] * dim for _ in range(dim)]
        for qi, gi in zip(q, g, strict=True):
            z = 1 + sum(a * b for a, b in zip(lam, gi, strict=True))
            for r in range(dim):
                grad[r] -= qi * gi[r] / z
                for c in range(dim):
                    hess[r][c] += qi * gi[r] * gi[c] / z / z
        if dim == 1:
            step = [-grad[0] / hess[0][0]]
        else:
            det = hess[0][0] * hess[1][1] - hess[0][1] * hess[1][0]
            step = [
                -(hess[1][1] * grad[0] - hess[0][1] * grad[1]) / det,
                -(hess[0][0] * grad[1] - hess[1][0] * grad[0]) / det,
            ]
        scale = 1.0
        while True:
            trial = [a + scale * b for a, b in zip(lam, step, strict=True)]
            found = value(trial)
            if found <= current or scale < 1e-12:
                break
            scale /= 2
        lam = trial
        done = current - found < 1e-16
        current = min(current, found)
        if done:
            break
    return current


def profile(q: Sequence[float], t: float) -> float:
    """max over distributions with t-value t of sum q_i log p_i, less sum q_i log q_i."""
    if t == 0:
        return dual_minimum(q, [(a - 0.5,) for a in SCORES])

    def best_at(mu: float) -> float:
        var = ((mu - 0.5) / t) ** 2
        return dual_minimum(q, [(a - mu, (a - mu) ** 2 - var) for a in SCORES])

    # Feasible means on the five points: above 1/2 + (t²/4)/(1+t²) the variance exceeds the
    # smallest one possible, below 1/2 + (t/2)/sqrt(1+t²) it is under mu(1-mu).
    w = abs(t)
    near, far = 0.25 * w * w / (1 + w * w), 0.5 * w / math.sqrt(1 + w * w)
    lo, hi = (0.5 + near, 0.5 + far) if t > 0 else (0.5 - far, 0.5 - near)
    golden = (math.sqrt(5) - 1) / 2
    c, d = hi - golden * (hi - lo), lo + golden * (hi - lo)
    fc, fd = best_at(c), best_at(d)
    while hi - lo > 1e-13:
        if fc > fd:
            hi, d, fd = d, c, fc
            c = hi - golden * (hi - lo)
            fc = best_at(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + golden * (hi - lo)
            fd = best_at(d)
    return best_at((lo + hi) / 2)


def profiled_llr(penta: Sequence[int], elo0: float, elo1: float) -> float:
    counts = [n if n else 1e-3 for n in penta]  # fastchess's regularization
    total = sum(counts)
    q = [n / total for n in counts]
    t0, t1 = (math.sqrt(2) * elo / NELO_PER_T for elo in (elo0, elo1))
    return total * (profile(q, t1) - profile(q, t0))


# -- llr -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("penta", "elo0", "elo1", "published"),
    [
        # fastchess app/tests/sprt_test.cpp, "normalized pentanomial 1/2/3", where Stats takes
        # (LL, LD, WL, DD, WD, WW) and WL + DD make the middle count.
        ((365, 16618, 36029 + 200, 16974, 390), 0, 2, 2.25),
        ((127, 4883, 10311 + 401, 5150, 104), -1.75, 0.25, 3.01),
        ((0, 0, 0, 0, 5550), 0, 5, 111.82),
    ],
)
def test_llr_matches_fastchess(penta, elo0, elo1, published):
    # fastchess prints two decimals and stops its iteration at 1e-4, so allow a little more.
    assert llr(penta, elo0, elo1) == pytest.approx(published, rel=5e-4, abs=0.006)
    assert llr(penta, elo0, elo1) == pytest.approx(profiled_llr(penta, elo0, elo1), abs=1e-8)


pentas = st.tuples(*[st.integers(0, 400)] * 5).filter(lambda p: sum(p) > 0)


# Quarter-Elo steps: near t = 0 the profiling's bracket of feasible means collapses.
quarters = st.integers(-60, 40).map(lambda n: n / 4)


@settings(max_examples=30, deadline=None)
@given(pentas, quarters, st.integers(1, 60))
def test_llr_matches_the_profiled_likelihood(penta, elo0, width):
    elo1 = elo0 + width / 4
    assert llr(penta, elo0, elo1) == pytest.approx(
        profiled_llr(penta, elo0, elo1), rel=1e-7, abs=1e-7
    )


@settings(max_examples=30, deadline=None)
@given(pentas, st.floats(-10, 10), st.floats(0.5, 10))
def test_llr_symmetries(penta, elo0, width):
    elo1 = elo0 + width
    value = llr(penta, elo0, elo1)
    # Swapping the hypotheses negates the LLR.
    assert llr(penta, elo1, elo0) == pytest.approx(-value, rel=1e-9, abs=1e-9)
    # Seen from the other side the counts reverse and every Elo changes sign.
    assert llr(penta[::-1], -elo0, -elo1) == pytest.approx(value, rel=1e-9, abs=1e-9)


def test_llr_without_pairs_or_variance():
    assert llr((0, 0, 0, 0, 0), 0, 5) == 0.0
    # Every pair drawn: regularized, so finite, and it mildly favours "no difference".
    drawn = llr((0, 0, 30, 0, 0), 0, 5)
    assert math.isfinite(drawn)
    assert -1.0 < drawn < 0.0
    assert llr((1, 0, 0, 0, 0), 0, 5) < 0.0 < llr((0, 0, 0, 0, 1), 0, 5)


def test_llr_rejects_bad_input():
    with pytest.raises(ValueError, match="five counts"):
        llr((1, 2, 3, 4), 0, 5)
    with pytest.raises(ValueError, match="five counts"):
        llr((1, 2, -3, 4, 5), 0, 5)
    with pytest.raises(ValueError, match="out of reach"):
        llr((10, 20, 30, 20, 10), 0, 400)


# -- bounds and decisions ----------------------------------------------------------------------


def test_bounds():
    # ln(0.05/0.95) = -2.944439 and ln(0.95/0.05) = 2.944439.
    lower, upper = bounds()
    assert lower == pytest.approx(-2.944439, abs=1e-6)
    assert upper == pytest.approx(2.944439, abs=1e-6)
    lower, upper = bounds(0.01, 0.2)
    assert lower == pytest.approx(math.log(0.2 / 0.99))
    assert upper == pytest.approx(math.log(0.8 / 0.01))
    for alpha, beta in ((0.0, 0.05), (0.05, 1.0), (0.6, 0.5), (-0.1, 0.1)):
        with pytest.raises(ValueError, match="alpha and beta"):
            bounds(alpha, beta)


def test_sprt_decisions():
    strong = sprt((20, 120, 400, 240, 60), 0, 5)
    assert strong.decision == "H1"
    assert strong.llr >= strong.upper
    even = sprt((600, 3600, 7200, 3600, 600), 0, 5)
    assert even.decision == "H0"
    assert even.llr <= even.lower
    weak = sprt((60, 240, 400, 120, 20), 0, 5)
    assert weak.decision == "H0"
    undecided = sprt((2, 10, 20, 11, 2), 0, 5)
    assert undecided.decision is None
    assert undecided.lower < undecided.llr < undecided.upper
    assert undecided == SprtState(llr((2, 10, 20, 11, 2), 0, 5), *bounds(), None)
    with pytest.raises(ValueError, match="elo0 must be below elo1"):
        sprt((1, 1, 1, 1, 1), 5, 5)


def test_parse_bounds():
    assert parse_bounds("0,5") == (0.0, 5.0)
    assert parse_bounds(" -1.5 , 2.5 ") == (-1.5, 2.5)
    for text in ("5,0", "1,1", "x", "1,2,3", "", "1;2", "nan,1", "0,inf", "a,b"):
        with pytest.raises(ValueError, match="--sprt must be ELO0,ELO1 with ELO0 < ELO1") as err:
            parse_bounds(text)
        assert repr(text) in str(err.value)
    # Bounds no data can test are refused when read, not in the middle of a run.
    with pytest.raises(ValueError, match=r"--sprt 0,400: .* out of reach"):
        parse_bounds("0,400")


# -- pentanomial -----------------------------------------------------------------------------


def test_pentanomial_counts_pairs_from_a_point_of_view():
    games = [
        # won both, once as a and once as b
        PairResult("s1", "A", "B", 1.0),
        PairResult("s1", "B", "A", 0.0),
        # a loss and a draw: 0.5
        PairResult("s2", "A", "B", 0.0),
        PairResult("s2", "A", "B", 0.5),
        # a win and a loss: 1
        PairResult("s3", "B", "A", 1.0),
        PairResult("s3", "A", "B", 1.0),
        # two draws: 1
        PairResult("s4", "A", "B", 0.5),
        PairResult("s4", "B", "A", 0.5),
        # a win and a draw: 1.5
        PairResult("s5", "A", "B", 0.5),
        PairResult("s5", "B", "A", 0.0),
        # lost both
        PairResult("s6", "B", "A", 1.0),
        PairResult("s6", "B", "A", 1.0),
        # one game only, three games, and other entries: not pairs of A and B
        PairResult("s7", "A", "B", 1.0),
        PairResult("s8", "A", "B", 1.0),
        PairResult("s8", "A", "B", 1.0),
        PairResult("s8", "B", "A", 1.0),
        PairResult("s9", "A", "C", 1.0),
        PairResult("s9", "A", "C", 1.0),
        PairResult("s9", "B", "C", 0.0),
        PairResult("s9", "C", "B", 1.0),
        # a pair among other games of the same set (a three-sided game's pairs)
        PairResult("s10", "A", "B", 1.0),
        PairResult("s10", "A", "C", 0.0),
        PairResult("s10", "B", "A", 0.0),
    ]
    assert pentanomial(games, "A", "B") == (1, 1, 2, 1, 2)
    assert pentanomial(games, "B", "A") == (2, 1, 2, 1, 1)
    assert pentanomial(games, "A", "Z") == (0, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="two different entries"):
        pentanomial(games, "A", "A")
    with pytest.raises(ValueError, match="score_a"):
        pentanomial([PairResult("s", "A", "B", 0.7)], "A", "B")
