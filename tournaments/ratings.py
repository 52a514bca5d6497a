"""Elo ratings by maximum likelihood, bootstrap intervals and likelihood of superiority.

The model is Bradley–Terry on the logistic 400-point Elo scale, as in BayesElo and Ordo:
``P(a beats b) = 1 / (1 + 10**((Rb - Ra) / 400))``, and a draw counts as half a win for each
side. Games are first summed per pair of entries, so a fit costs O(iterations · pairs), and the
log-likelihood is maximized by Newton's method (it is concave, so the optimum is unique once
the ratings' common offset is fixed).

Intervals come from a bootstrap over duplicate sets: each replicate draws the distinct
``set_key`` values with replacement and refits, so the games of one set, which share their
deals and are correlated, stay together. For an entry of fewer than :data:`FEW_SETS` sets
the interval is widened to the normal one from the fit's curvature where that is wider.
The prior's virtual draws stay on every pair that met in the tournament, whether a
replicate drew its sets or not.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from types import MappingProxyType

# Natural log-odds per Elo point: P = 1 / (1 + exp(-(Ra - Rb) * _K)).
_K = math.log(10.0) / 400.0
_TOLERANCE_ELO = 1e-9
# Steps this small that stop shrinking are rounding noise: the fit has converged.
_NOISE_ELO = 1e-6
_MAX_ITERATIONS = 200
# Past this step size (in log-odds) a Newton step may overshoot, so it is line-searched.
_DAMP_ABOVE = 0.5
_REDRAW_FACTOR = 10
FEW_SETS = 10
"""Below this many duplicate sets an entry's interval is the wider of the bootstrap's and
the normal interval from the fit's curvature."""


class RatingsError(ValueError):
    """Results that cannot be rated, or arguments that make no sense."""


@dataclass(frozen=True)
class PairResult:
    """One game between two entries, as seen from ``a``."""

    set_key: str
    """The duplicate set the game belongs to; the bootstrap resamples whole sets."""
    a: str
    """One entry's name."""
    b: str
    """The other entry's name."""
    score_a: float
    """``a``'s score: 1.0 (win), 0.5 (draw) or 0.0 (loss); ``b`` scores ``1 - score_a``."""


@dataclass(frozen=True)
class Rating:
    """One entry's Elo and its bootstrap interval."""

    name: str
    """The entry's name."""
    elo: float
    """The maximum-likelihood Elo."""
    ci_low: float
    """Lower end of the percentile interval (an absolute Elo value)."""
    ci_high: float
    """Upper end of the percentile interval (an absolute Elo value)."""


@dataclass(frozen=True)
class Ratings:
    """Every entry's rating, best first, with what the bootstrap found."""

    ratings: tuple[Rating, ...]
    """One per entry, by Elo descending, ties by name."""
    samples: int
    """The number of bootstrap replicates."""
    level: float
    """The confidence level of the intervals, e.g. 0.95."""
    _replicates: Mapping[str, tuple[float, ...]] = field(
        default_factory=dict, repr=False, compare=False
    )
    """Each entry's Elo in every replicate, in replicate order."""

    def los(self, a: str, b: str) -> float:
        """Likelihood of superiority: the share of replicates where ``a`` out-rates ``b``.

        Ties count half. :class:`RatingsError` for an unknown name or with no replicates.
        """
        for name in (a, b):
            if name not in self._replicates:
                raise RatingsError(f"unknown entry {name!r}")
        if self.samples == 0:
            raise RatingsError("no bootstrap samples")
        wins = 0.0
        for x, y in zip(self._replicates[a], self._replicates[b], strict=True):
            if x > y:
                wins += 1.0
            elif x == y:
                wins += 0.5
        return wins / self.samples


def los_from_counts(wins: float, losses: float) -> float:
    """The head-to-head LOS of cutechess and fastchess; 0.5 when there are no decisive games.

    ``0.5 * (1 + erf((wins - losses) / sqrt(2 * (wins + losses))))``; draws do not enter.
    """
    if wins < 0 or losses < 0 or math.isnan(wins) or math.isnan(losses):
        raise RatingsError(f"wins and losses must be >= 0, got {wins!r} and {losses!r}")
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


# Per unordered pair of entry indices (i < j): [games, score of i].
_Tally = dict[tuple[int, int], list[float]]


def _checked(results: Iterable[PairResult]) -> list[PairResult]:
    games = list(results)
    if not games:
        raise RatingsError("no results to rate")
    for game in games:
        if game.score_a not in (0.0, 0.5, 1.0):
            raise RatingsError(
                f"score_a must be 1.0, 0.5 or 0.0, got {game.score_a!r} "
                f"({game.a} v {game.b}, set {game.set_key!r})"
            )
        if game.a == game.b:
            raise RatingsError(f"{game.a} cannot play itself (set {game.set_key!r})")
    return games


def _add(tally: _Tally, index: Mapping[str, int], game: PairResult) -> None:
    i, j = index[game.a], index[game.b]
    score = game.score_a
    if i > j:
        i, j, score = j, i, 1.0 - score
    cell = tally.setdefault((i, j), [0.0, 0.0])
    cell[0] += 1.0
    cell[1] += score


def _connected(k: int, tally: _Tally) -> bool:
    parent = list(range(k))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    groups = k
    for i, j in tally:
        ri, rj = root(i), root(j)
        if ri != rj:
            parent[ri] = rj
            groups -= 1
    return groups == 1


def _components(names: Sequence[str], tally: _Tally) -> list[list[str]]:
    index = {name: i for i, name in enumerate(names)}
    parent = list(range(len(names)))

    def root(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for i, j in tally:
        parent[root(i)] = root(j)
    groups: dict[int, list[str]] = {}
    for name in names:
        groups.setdefault(root(index[name]), []).append(name)
    return sorted(groups.values())


def _infinite_mle(names: Sequence[str], tally: _Tally) -> str | None:
    """Why the unpenalized MLE is infinite, or None if it is finite.

    It is finite exactly when the graph "i took points off j" is strongly connected (Zermelo,
    Ford): otherwise some group won every game it played against everyone else.
    """
    k = len(names)
    took: list[set[int]] = [set() for _ in range(k)]  # took[i]: whom i took points off
    for (i, j), (games, score) in tally.items():
        if score > 0:
            took[i].add(j)
        if score < games:
            took[j].add(i)

    def reach(start: int, edges: list[set[int]]) -> set[int]:
        seen = {start}
        todo = [start]
        while todo:
            for nxt in edges[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    given: list[set[int]] = [set() for _ in range(k)]  # given[j]: who took points off j
    for i in range(k):
        for j in took[i]:
            given[j].add(i)
    component: list[int] = [-1] * k
    for start in range(k):
        if component[start] < 0:
            for member in reach(start, took) & reach(start, given):
                component[member] = start
    if len(set(component)) == 1:
        return None
    # A component that nobody outside took points off won all its outside games.
    unbeaten: list[list[str]] = []
    winless: list[list[str]] = []
    for c in sorted(set(component)):
        inside = {i for i in range(k) if component[i] == c}
        if not any(given[m] - inside for m in inside):
            unbeaten.append(sorted(names[m] for m in inside))
        if not any(took[m] - inside for m in inside):
            winless.append(sorted(names[m] for m in inside))
    for group in unbeaten:
        if len(group) == 1:
            return f"{group[0]} won every game"
    for group in winless:
        if len(group) == 1:
            return f"{group[0]} lost every game"
    group = unbeaten[0]
    return f"{', '.join(group)} won every game against the other entries"


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """Gaussian elimination without pivoting: the reduced Hessian is positive definite."""
    n = len(rhs)
    for col in range(n):
        pivot_row = matrix[col]
        pivot = pivot_row[col]
        for row in range(col + 1, n):
            target = matrix[row]
            factor = target[col] / pivot
            if factor != 0.0:
                for c in range(col + 1, n):
                    target[c] -= factor * pivot_row[c]
                rhs[row] -= factor * rhs[col]
    out = [0.0] * n
    for row in range(n - 1, -1, -1):
        acc = rhs[row]
        r = matrix[row]
        for c in range(row + 1, n):
            acc -= r[c] * out[c]
        out[row] = acc / r[row]
    return out


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan inverse without pivoting: the reduced information is positive definite."""
    n = len(matrix)
    a = [row[:] + [1.0 if r == c else 0.0 for c in range(n)] for r, row in enumerate(matrix)]
    for col in range(n):
        pivot = a[col][col]
        a[col] = [v / pivot for v in a[col]]
        for row in range(n):
            if row != col and a[row][col] != 0.0:
                factor = a[row][col]
                a[row] = [v - factor * p for v, p in zip(a[row], a[col], strict=True)]
    return [row[n:] for row in a]


def _curvature_se(k: int, pairs: _Pairs, x: Sequence[float], anchor: int | None) -> list[float]:
    """Each entry's standard error in Elo, from the curvature of the fit's log-likelihood
    (prior included) at ``x``: relative to ``anchor`` (whose error is 0), or to the
    pool's mean. It does not collapse when a few sets all end alike, as the bootstrap
    over those sets does."""
    reference = 0 if anchor is None else anchor
    free = [i for i in range(k) if i != reference]
    _, info = _gradient_and_information(k, pairs, x, reference)
    cov = _inverse(info) if free else []
    full = [[0.0] * k for _ in range(k)]
    for a, i in enumerate(free):
        for b, j in enumerate(free):
            full[i][j] = cov[a][b]
    out = []
    for i in range(k):
        if anchor is not None:
            var = full[i][i]
        else:
            # Var(x_i - mean(x)) = (e_i - 1/k)' C (e_i - 1/k)
            weights = [(1.0 if c == i else 0.0) - 1.0 / k for c in range(k)]
            var = math.fsum(
                weights[r] * full[r][c] * weights[c] for r in range(k) for c in range(k)
            )
        out.append(math.sqrt(max(var, 0.0)) / _K)
    return out


# Per pair of entries that met (i < j): i, j, i's score and j's score, prior included. The two
# scores are kept apart, not as games and score, so that a lopsided pair's gradient
# s_i·q - s_j·p does not come from subtracting two nearly equal numbers.
_Pairs = Sequence[tuple[int, int, float, float]]


def _odds(d: float) -> tuple[float, float]:
    """P(i beats j) and P(j beats i) for log-odds difference ``d``, each without cancellation."""
    if d >= 0.0:
        e = math.exp(-d)
        return 1.0 / (1.0 + e), e / (1.0 + e)
    e = math.exp(d)
    return e / (1.0 + e), 1.0 / (1.0 + e)


def _log_likelihood(x: Sequence[float], pairs: _Pairs) -> float:
    total = 0.0
    for i, j, score_i, score_j in pairs:
        d = x[i] - x[j]
        # log p = -log(1 + e^-d) and log q = log p - d, written to stay finite for large |d|.
        log_p = -math.log1p(math.exp(-d)) if d > 0 else d - math.log1p(math.exp(d))
        total += score_i * log_p + score_j * (log_p - d)
    return total


def _gradient_and_information(
    k: int, pairs: _Pairs, x: Sequence[float], fixed: int
) -> tuple[list[float], list[list[float]]]:
    """The log-likelihood's gradient at ``x`` (every entry), and its information matrix
    (minus the Hessian) over every entry but ``fixed``, in their order."""
    slot = [-1] * k
    for n, i in enumerate(i for i in range(k) if i != fixed):
        slot[i] = n
    grad = [0.0] * k
    info = [[0.0] * (k - 1) for _ in range(k - 1)]
    for i, j, score_i, score_j in pairs:
        p, q = _odds(x[i] - x[j])
        g = score_i * q - score_j * p  # actual minus expected score of i
        w = (score_i + score_j) * p * q
        grad[i] += g
        grad[j] -= g
        si, sj = slot[i], slot[j]
        if si >= 0:
            info[si][si] += w
        if sj >= 0:
            info[sj][sj] += w
            if si >= 0:
                info[si][sj] -= w
                info[sj][si] -= w
    return grad, info


def _newton(k: int, pairs: _Pairs, fixed: int, start: Sequence[float] | None = None) -> list[float]:
    """Log-odds ratings maximizing the likelihood, with entry ``fixed`` held where it starts."""
    x = list(start) if start is not None else [0.0] * k
    free = [i for i in range(k) if i != fixed]
    previous = math.inf
    for _ in range(_MAX_ITERATIONS):
        grad, hess = _gradient_and_information(k, pairs, x, fixed)
        step = _solve(hess, [grad[i] for i in free])
        biggest = max(abs(s) for s in step)
        scale = 1.0
        if biggest > _DAMP_ABOVE:
            # Far from the optimum a full step can overshoot; halve until it does not lose
            # likelihood. Near it the quadratic model is good and the step is taken as is.
            before = _log_likelihood(x, pairs)
            while scale > 1e-6:
                trial = list(x)
                for n, i in enumerate(free):
                    trial[i] += scale * step[n]
                if _log_likelihood(trial, pairs) >= before:
                    break
                scale /= 2.0
        for n, i in enumerate(free):
            x[i] += scale * step[n]
        moved = biggest * scale / _K
        if moved <= _TOLERANCE_ELO or previous <= moved < _NOISE_ELO:
            return x
        previous = moved
    raise RatingsError("the rating fit did not converge")


def _fit_pairs(tally: _Tally, prior_draws: float) -> list[tuple[int, int, float, float]]:
    half = prior_draws / 2.0
    return [(i, j, score + half, games - score + half) for (i, j), (games, score) in tally.items()]


def _place(x: Sequence[float], anchor: int | None, anchor_elo: float) -> list[float]:
    elo = [v / _K for v in x]
    offset = anchor_elo - (elo[anchor] if anchor is not None else math.fsum(elo) / len(elo))
    placed = [e + offset for e in elo]
    if anchor is not None:
        placed[anchor] = anchor_elo  # exactly, whatever the rounding of the shift
    return placed


def _prepare(
    results: Iterable[PairResult], anchor: str | None, prior_draws: float
) -> tuple[list[PairResult], list[str], dict[str, int], int | None]:
    games = _checked(results)
    if not (prior_draws >= 0 and math.isfinite(prior_draws)):
        raise RatingsError(f"prior_draws must be a finite number >= 0, got {prior_draws!r}")
    names = sorted({g.a for g in games} | {g.b for g in games})
    index = {name: i for i, name in enumerate(names)}
    if anchor is not None and anchor not in index:
        raise RatingsError(f"anchor {anchor!r} is not an entry in the results")
    return games, names, index, None if anchor is None else index[anchor]


def _fit(
    names: Sequence[str],
    tally: _Tally,
    prior_draws: float,
    start: Sequence[float] | None = None,
) -> list[float]:
    """Log-odds ratings (entry 0 at 0 unless ``start`` says otherwise), or RatingsError."""
    if not _connected(len(names), tally):
        groups = " | ".join(", ".join(group) for group in _components(names, tally))
        raise RatingsError(f"the entries do not all connect through games: {groups}")
    if prior_draws == 0:
        reason = _infinite_mle(names, tally)
        if reason is not None:
            raise RatingsError(
                f"the ratings are unbounded ({reason}); use prior_draws > 0 to rate anyway"
            )
    return _newton(len(names), _fit_pairs(tally, prior_draws), 0, start)


def fit_elo(
    results: Iterable[PairResult],
    *,
    anchor: str | None = None,
    anchor_elo: float = 1500.0,
    prior_draws: float = 1.0,
) -> dict[str, float]:
    """Maximum-likelihood Elo of every entry in ``results``.

    With ``anchor`` None the mean rating is ``anchor_elo``; otherwise that entry is fixed
    there. ``prior_draws`` virtual draws are added to every pair of entries that met at least
    once, which keeps ratings finite when someone wins everything; 0 gives the pure MLE.
    :class:`RatingsError` if the entries do not all connect through games, if the MLE is
    infinite (only possible with ``prior_draws=0``), for an unknown anchor or a bad score.
    """
    games, names, index, fixed = _prepare(results, anchor, prior_draws)
    tally: _Tally = {}
    for game in games:
        _add(tally, index, game)
    elo = _place(_fit(names, tally, prior_draws), fixed, anchor_elo)
    return dict(zip(names, elo, strict=True))


def _quantile(ordered: Sequence[float], q: float) -> float:
    # Linear interpolation between order statistics (numpy's default "linear" method).
    h = (len(ordered) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (h - lo) * (ordered[hi] - ordered[lo])


def rate(
    results: Iterable[PairResult],
    *,
    anchor: str | None = None,
    anchor_elo: float = 1500.0,
    prior_draws: float = 1.0,
    samples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Ratings:
    """Ratings from :func:`fit_elo` with bootstrap percentile intervals at ``level``.

    Each of the ``samples`` replicates draws the distinct set keys (in sorted order) with
    replacement using ``random.Random(seed)``, and refits with the same anchor and prior (on
    every pair that met, drawn or not). A draw whose games do not connect every entry
    (possible only with ``prior_draws=0``) is discarded and drawn again; more than
    ``10 * samples`` draws in all raise :class:`RatingsError`, as does a replicate with an
    infinite MLE (``prior_draws=0``). With ``samples=0`` each interval is the point itself
    and :meth:`Ratings.los` raises.
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 0:
        raise RatingsError(f"samples must be an int >= 0, got {samples!r}")
    if not 0.0 < level < 1.0:
        raise RatingsError(f"level must lie strictly between 0 and 1, got {level!r}")
    games, names, index, fixed = _prepare(results, anchor, prior_draws)
    tally: _Tally = {}
    by_set: dict[str, _Tally] = {}
    for game in games:
        _add(tally, index, game)
        _add(by_set.setdefault(game.set_key, {}), index, game)
    point_x = _fit(names, tally, prior_draws)
    point = _place(point_x, fixed, anchor_elo)

    keys = sorted(by_set)
    rng = random.Random(seed)
    columns: list[list[float]] = [[] for _ in names]
    draws = 0
    while len(columns[0]) < samples:
        draws += 1
        if draws > _REDRAW_FACTOR * samples:
            raise RatingsError(
                f"{draws - 1} bootstrap draws gave only {len(columns[0])} of {samples} "
                "replicates whose games connect every entry; play more sets"
            )
        counts: dict[str, int] = {}
        for key in rng.choices(keys, k=len(keys)):
            counts[key] = counts.get(key, 0) + 1
        # The prior's virtual draws belong to every pair that met in the tournament, not
        # only to those a replicate drew: a gauntlet of one set a pair then stays
        # connected in every replicate (a pair not drawn is held by its prior alone),
        # where discarding replicates kept only those that drew every set once.
        replicate: _Tally = {pair: [0.0, 0.0] for pair in tally} if prior_draws > 0 else {}
        for key, times in counts.items():
            for pair, (n, s) in by_set[key].items():
                cell = replicate.setdefault(pair, [0.0, 0.0])
                cell[0] += times * n
                cell[1] += times * s
        if not _connected(len(names), replicate):
            continue
        try:
            x = _fit(names, replicate, prior_draws, point_x)
        except RatingsError as exc:
            raise RatingsError(f"bootstrap replicate: {exc}") from None
        for column, elo in zip(columns, _place(x, fixed, anchor_elo), strict=True):
            column.append(elo)

    low_q, high_q = (1.0 - level) / 2.0, (1.0 + level) / 2.0
    z = NormalDist().inv_cdf(high_q)
    errors = _curvature_se(len(names), _fit_pairs(tally, prior_draws), point_x, fixed)
    sets_of = [0] * len(names)
    for cells in by_set.values():
        for i in {i for pair in cells for i in pair}:
            sets_of[i] += 1
    rows = []
    for i, (name, elo, column) in enumerate(zip(names, point, columns, strict=True)):
        if samples:
            ordered = sorted(column)
            low, high = _quantile(ordered, low_q), _quantile(ordered, high_q)
            if sets_of[i] < FEW_SETS:
                # Few sets: the percentile bootstrap is too narrow, and with sets that all
                # end alike it has nothing to resample (+0 / +0, a 4-0 shown as certain).
                # The normal interval from the fit's curvature does not collapse.
                low = min(low, elo - z * errors[i])
                high = max(high, elo + z * errors[i])
        else:
            low = high = elo
        rows.append(Rating(name, elo, low, high))
    rows.sort(key=lambda r: (-r.elo, r.name))
    replicates = {name: tuple(column) for name, column in zip(names, columns, strict=True)}
    return Ratings(tuple(rows), samples, level, MappingProxyType(replicates))
