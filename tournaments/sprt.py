"""Pentanomial counts of duplicate pairs and the GSPRT on normalized Elo.

The log-likelihood ratio is the generalized one of fishtest (``LLRcalc.LLR_normalized``) and
fastchess (the "normalized" model with pentanomial statistics), after Michel Van den Bergh,
"Comments on Normalized Elo" (https://www.cantate.be/Fishtest/normalized_elo_practical.pdf):
each pair's half-score lies in {0, 1/4, 1/2, 3/4, 1}; normalized Elo ``nelo`` is the
t-value ``t = (mu - 1/2) / sigma`` of that distribution times ``800 / ln 10 / sqrt 2``; and
the LLR is the log of the ratio of the empirical distribution's likelihoods under the
maximum-likelihood distributions with ``t = t1`` and ``t = t0`` (section 4.1). As in both,
a zero count is replaced by 0.001 so that a small or one-sided sample gives a finite LLR.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tournaments.ratings import PairResult

# Normalized Elo per unit of t-value (per game); fishtest's ``nelo_divided_by_nt``.
_NELO_PER_T = 800.0 / math.log(10.0)
_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
_ZERO_COUNT = 1e-3
# fishtest's stopping rule (fastchess stops at 1e-4): a change under 1e-9 in every
# probability. Tighter is pointless, as rounding can make the iteration cycle at ~1e-10.
_CONVERGED = 1e-9
_MAX_ROUNDS = 100


@dataclass(frozen=True)
class SprtState:
    """Where a sequential test stands."""

    llr: float
    """The log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``)."""
    lower: float
    """The bound at or below which H0 is accepted: ``ln(beta / (1 - alpha))``."""
    upper: float
    """The bound at or above which H1 is accepted: ``ln((1 - beta) / alpha)``."""
    decision: str | None
    """``"H1"`` or ``"H0"`` once a bound is reached, else None (keep playing)."""


def pentanomial(results: Iterable[PairResult], a: str, b: str) -> tuple[int, int, int, int, int]:
    """Counts of ``a``'s pair score 0, 0.5, 1, 1.5 and 2 against ``b``.

    A pair is the two games ``a`` and ``b`` played in one duplicate set; sets in which they
    met any other number of times are left out, since their games do not form a pair.
    """
    if a == b:
        raise ValueError(f"pentanomial needs two different entries, got {a!r} twice")
    by_set: dict[str, list[float]] = {}
    for game in results:
        if {game.a, game.b} != {a, b}:
            continue
        if game.score_a not in (0.0, 0.5, 1.0):
            raise ValueError(f"score_a must be 1.0, 0.5 or 0.0, got {game.score_a!r}")
        score = game.score_a if game.a == a else 1.0 - game.score_a
        by_set.setdefault(game.set_key, []).append(score)
    counts = [0, 0, 0, 0, 0]
    for scores in by_set.values():
        if len(scores) == 2:
            counts[round(2 * (scores[0] + scores[1]))] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def _mean_var(p: Sequence[float]) -> tuple[float, float]:
    mu = sum(a * q for a, q in zip(_SCORES, p, strict=True))
    return mu, sum(q * (a - mu) ** 2 for a, q in zip(_SCORES, p, strict=True))


def _secular(phat: Sequence[float], phi: Sequence[float]) -> float:
    """The root x of sum phat_i phi_i / (1 + x phi_i) = 0 with every 1 + x phi_i > 0."""
    lo, hi = -1.0 / max(phi), -1.0 / min(phi)
    # The sum falls strictly from +inf to -inf across (lo, hi): bisect to full precision.
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            break
        if sum(q * f / (1.0 + mid * f) for q, f in zip(phat, phi, strict=True)) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def _mle_t(phat: Sequence[float], t: float) -> list[float]:
    """The most likely distribution on the pair scores whose t-value is ``t`` (section 4.1)."""
    p = [1.0 / len(phat)] * len(phat)
    for _ in range(_MAX_ROUNDS):
        mu, var = _mean_var(p)
        sigma = math.sqrt(var)
        phi = [a - 0.5 - 0.5 * t * sigma * (1.0 + ((a - mu) / sigma) ** 2) for a in _SCORES]
        if not min(phi) < 0.0 < max(phi):
            raise ValueError(
                f"a normalized Elo bound of {t * _NELO_PER_T / math.sqrt(2):.1f} is out of reach "
                "for the GSPRT; use bounds of a realistic size"
            )
        x = _secular(phat, phi)
        new = [q / (1.0 + x * f) for q, f in zip(phat, phi, strict=True)]
        change = max(abs(n - o) for n, o in zip(new, p, strict=True))
        p = new
        if change < _CONVERGED:
            break
    return p


def _check_penta(penta: Sequence[int]) -> None:
    if len(penta) != 5 or any(n < 0 for n in penta):
        raise ValueError(f"a pentanomial is five counts >= 0, got {tuple(penta)!r}")


def llr(penta: Sequence[int], elo0: float, elo1: float) -> float:
    """The GSPRT log-likelihood ratio of normalized Elo ``elo1`` against ``elo0``.

    ``penta`` holds the pair counts from :func:`pentanomial` (lost both … won both). It is
    0.0 when there are no pairs; zero counts are otherwise regularized as in fastchess.
    """
    _check_penta(penta)
    if sum(penta) == 0:
        return 0.0
    counts = [float(n) if n else _ZERO_COUNT for n in penta]
    total = sum(counts)
    phat = [n / total for n in counts]
    # The t-value per pair is sqrt(2) times the per-game one that normalized Elo measures.
    t0, t1 = (math.sqrt(2.0) * elo / _NELO_PER_T for elo in (elo0, elo1))
    p0, p1 = _mle_t(phat, t0), _mle_t(phat, t1)
    return total * sum(
        q * (math.log(b) - math.log(a)) for q, a, b in zip(phat, p0, p1, strict=True)
    )


def bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """The LLR bounds ``(ln(beta / (1 - alpha)), ln((1 - beta) / alpha))``."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ValueError(
            f"alpha and beta must lie in (0, 1) with alpha + beta < 1, got {alpha!r}, {beta!r}"
        )
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def sprt(
    penta: Sequence[int], elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05
) -> SprtState:
    """The test of H0 (normalized Elo ``elo0``) against H1 (``elo1``) after ``penta``."""
    if not elo0 < elo1:
        raise ValueError(f"elo0 must be below elo1, got {elo0!r} and {elo1!r}")
    lower, upper = bounds(alpha, beta)
    value = llr(penta, elo0, elo1)
    decision = "H1" if value >= upper else "H0" if value <= lower else None
    return SprtState(value, lower, upper, decision)


def parse_bounds(text: str) -> tuple[float, float]:
    """``"ELO0,ELO1"`` as two finite floats with ``ELO0 < ELO1``, else ValueError."""
    message = f"--sprt must be ELO0,ELO1 with ELO0 < ELO1, got {text!r}"
    parts = text.split(",")
    if len(parts) != 2:
        raise ValueError(message)
    try:
        elo0, elo1 = float(parts[0]), float(parts[1])
    except ValueError:
        raise ValueError(message) from None
    if not (math.isfinite(elo0) and math.isfinite(elo1) and elo0 < elo1):
        raise ValueError(message)
    try:  # bounds too far apart fail on any data: say so now, not in the middle of a run
        llr([1, 1, 1, 1, 1], elo0, elo1)
    except ValueError as exc:
        raise ValueError(f"--sprt {text}: {exc}") from None
    return elo0, elo1
