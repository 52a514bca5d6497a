"""Who plays whom: round robin, gauntlet and Swiss pairings.

Pure functions of entry names. A match is played between ``sides`` entries: 2 for
four-player Tressette (one entry per partnership), 3 for three-handed games (one per player).
Every schedule keeps one rule: no entry plays twice in the same round.

Swiss pairing is exact about rematches without exhaustive backtracking: the search walks the
ranking top-down and gives each top entry the first partner that still lets the rest be paired
with the fewest rematches possible. A maximum matching of the graph of unplayed pairs (Edmonds'
blossom algorithm) answers that question, so no choice is ever undone. A trial costs at most two
augmenting-path searches of O(n²), and a round makes at most n²/2 trials: O(n⁴) in the worst
case, typically n/2 trials when a repeat-free pairing exists (the common case).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


class ScheduleError(ValueError):
    """Entries that cannot make a schedule: too few, duplicated, or misplaced."""


@dataclass(frozen=True)
class Pairing:
    """One match."""

    round: int
    """1-based round; no entry appears twice in one round."""
    entries: tuple[str, ...]
    """One entry per side, in seating order of the match's first game."""


@dataclass(frozen=True)
class SwissRound:
    """The matches of one Swiss round."""

    pairings: tuple[Pairing, ...]
    """Top board first: ordered by the ranking of each match's higher-ranked entry."""
    bye: str | None
    """The entry that sits the round out; ``None`` with an even number of entries."""


def round_robin(entries: Sequence[str], *, sides: int = 2, double: bool = False) -> list[Pairing]:
    """Every combination of ``sides`` distinct entries once (``double``: again, seats reversed).

    Two sides follow the Berger tables: n−1 rounds for even n, n for odd n, where whoever
    would meet the missing entry sits out. Three or more sides fill one round after another
    greedily, taking first the combinations whose entries still owe the most matches (ties
    in ``itertools.combinations`` order): proper rounds, though not always the fewest. Each
    match's seats are then rotated to even out who sits first. The second cycle of
    ``double`` continues the round numbers.
    """
    _check_sides(sides)
    names = _distinct(entries, "entry")
    if len(names) < sides:
        raise ScheduleError(f"{len(names)} entries cannot fill a match of {sides} sides")
    single = _berger(names) if sides == 2 else _packed(names, sides)
    return _doubled(single) if double else single


def gauntlet(
    candidate: str, field: Sequence[str], *, sides: int = 2, double: bool = False
) -> list[Pairing]:
    """The candidate against every combination of ``sides``−1 field entries, one match a round.

    Combinations come in ``itertools.combinations`` order; the candidate's seat cycles
    through the seats (first, second, …) from one match to the next. ``double`` replays
    every match with the seats reversed, continuing the round numbers.
    """
    _check_sides(sides)
    others = _distinct(field, "field entry")
    if candidate in others:
        raise ScheduleError(f"the candidate {candidate!r} is also in the field")
    if len(others) + 1 < sides:
        raise ScheduleError(
            f"the candidate and {len(others)} field entries cannot fill a match of {sides} sides"
        )
    single = [
        Pairing(k + 1, (*group[: k % sides], candidate, *group[k % sides :]))
        for k, group in enumerate(itertools.combinations(others, sides - 1))
    ]
    return _doubled(single) if double else single


def swiss_rounds_possible(n: int) -> int:
    """Rounds that ``n`` entries can play without a rematch: those of a full round robin."""
    if n < 2:
        raise ScheduleError(f"a Swiss needs at least 2 entries, got {n}")
    return n - 1 if n % 2 == 0 else n


def swiss_round(
    entries: Sequence[str],
    round_number: int,
    scores: Mapping[str, float],
    met: Mapping[frozenset[str], int],
    byes: Mapping[str, int],
    *,
    sides: int = 2,
) -> SwissRound:
    """Pair one Swiss round.

    ``entries`` is the seeding, ``scores`` the match points so far, ``met`` the number of
    matches each pair has played, ``byes`` the byes each entry has had (missing keys count 0).
    Ranking is by score, then seeding. With an odd count the bye goes to an entry with the
    fewest byes: the lowest-ranked one that lets the rest pair with the fewest rematches.
    Pairs are then made top-down: each highest-ranked unpaired entry takes, among the
    partners that keep the rematch count at that minimum, one met the fewest times, then the
    highest-ranked. The higher-ranked entry sits first in odd rounds and second in even ones.
    """
    if sides != 2:
        raise ScheduleError(f"Swiss pairing needs matches of 2 sides, got {sides}")
    names = _distinct(entries, "entry")
    if len(names) < 2:
        raise ScheduleError(f"a Swiss needs at least 2 entries, got {len(names)}")
    if round_number < 1:
        raise ScheduleError(f"rounds count from 1, got {round_number}")
    seed = {name: k for k, name in enumerate(names)}
    ranked = sorted(names, key=lambda name: (-scores.get(name, 0.0), seed[name]))
    n = len(ranked)
    times = [[met.get(frozenset((a, b)), 0) if a != b else 0 for b in ranked] for a in ranked]
    graph = _Matching([[b for b in range(n) if b != a and times[a][b] == 0] for a in range(n)])
    graph.maximise()

    bye: str | None = None
    if n % 2:
        fewest = min(byes.get(name, 0) for name in ranked)
        best: _Matching | None = None
        for v in reversed(range(n)):
            if byes.get(ranked[v], 0) != fewest:
                continue
            trial = graph.without(v)
            if best is None or trial.size > best.size:
                best, bye = trial, ranked[v]
            if 2 * trial.size == n - 1:
                break
        assert best is not None  # someone always has the fewest byes
        graph = best

    pairings: list[Pairing] = []
    while (top := graph.first_alive()) is not None:
        partner, graph = _partner(graph, top, times[top])
        high, low = ranked[top], ranked[partner]
        seats = (high, low) if round_number % 2 else (low, high)
        pairings.append(Pairing(round_number, seats))
    return SwissRound(tuple(pairings), bye)


def _check_sides(sides: int) -> None:
    if sides < 2:
        raise ScheduleError(f"a match needs at least 2 sides, got {sides}")


def _distinct(names: Sequence[str], what: str) -> list[str]:
    seen: set[str] = set()
    repeated: list[str] = []
    for name in names:
        if name in seen and name not in repeated:
            repeated.append(name)
        seen.add(name)
    if repeated:
        raise ScheduleError(f"duplicate {what} names: {', '.join(map(repr, repeated))}")
    return list(names)


def _doubled(single: list[Pairing]) -> list[Pairing]:
    last = max(p.round for p in single)
    return single + [Pairing(last + p.round, p.entries[::-1]) for p in single]


def _berger(names: list[str]) -> list[Pairing]:
    players: list[str | None] = [*names]
    if len(players) % 2:
        players.append(None)
    n = len(players)
    fixed, circle = players[-1], players[:-1]
    half = n // 2
    out: list[Pairing] = []
    for r in range(n - 1):
        # Shifting the circle by n/2 rather than 1 is what makes a Berger table alternate
        # each entry's seat from round to round.
        start = r * half % (n - 1)
        ring = circle[start:] + circle[:start]
        tables = [(ring[0], fixed) if r % 2 == 0 else (fixed, ring[0])]
        tables += [(ring[k], ring[n - 1 - k]) for k in range(1, half)]
        for a, b in tables:
            if a is not None and b is not None:
                out.append(Pairing(r + 1, (a, b)))
    return out


def _packed(names: list[str], sides: int) -> list[Pairing]:
    left = list(itertools.combinations(names, sides))
    owed = dict.fromkeys(names, len(left) * sides // len(names))
    rounds: list[list[tuple[str, ...]]] = []
    while left:
        # Entries with the most matches still owed go first; otherwise the top seeds'
        # matches would fill the early rounds and the rest would trail on alone.
        busy: set[str] = set()
        taken: set[tuple[str, ...]] = set()
        for group in sorted(left, key=lambda group: -sum(owed[name] for name in group)):
            if busy.isdisjoint(group):
                busy.update(group)
                taken.add(group)
        for name in busy:
            owed[name] -= 1
        rounds.append([group for group in left if group in taken])
        left = [group for group in left if group not in taken]
    # Combinations list lower seeds first, so unrotated the top seed would always sit
    # first; a rotation keeps each match's cyclic seating order.
    seat_counts = {name: [0] * sides for name in names}
    out: list[Pairing] = []
    for r, groups in enumerate(rounds, 1):
        for group in groups:

            def load(shift: int, group: tuple[str, ...] = group) -> tuple[int, int, int]:
                seated = group[shift:] + group[:shift]
                spread = sum(seat_counts[name][seat] for seat, name in enumerate(seated))
                return seat_counts[seated[0]][0], spread, shift

            shift = min(range(sides), key=load)
            seated = group[shift:] + group[:shift]
            for seat, name in enumerate(seated):
                seat_counts[name][seat] += 1
            out.append(Pairing(r, seated))
    return out


def _partner(graph: _Matching, top: int, times: list[int]) -> tuple[int, _Matching]:
    """The partner of ``top`` and the matching of what remains, keeping rematches minimal."""
    candidates = sorted(
        (v for v in range(top + 1, len(times)) if graph.alive[v]), key=lambda v: (times[v], v)
    )
    for partner in candidates:
        rest = graph.without(top, partner)
        # A fresh pair uses up one unplayed pair of the maximum matching; a rematch must
        # leave the maximum intact, or it would cost a second rematch further down.
        if rest.size == graph.size - (1 if times[partner] == 0 else 0):
            return partner, rest
    raise AssertionError("a maximum matching always admits some partner")


class _Matching:
    """A maximum matching of the unplayed pairs among the entries still to pair.

    Vertices are ranking positions. Edmonds' blossom algorithm keeps it maximum: a vertex
    leaving frees at most its partner, and only paths from freed vertices can augment.
    """

    def __init__(self, adjacency: list[list[int]]) -> None:
        self.adjacency = adjacency
        self.alive = [True] * len(adjacency)
        self.mate = [-1] * len(adjacency)
        self.size = 0

    def first_alive(self) -> int | None:
        return next((v for v, alive in enumerate(self.alive) if alive), None)

    def maximise(self) -> None:
        # A greedy start along the ranking leaves little for the searches to do.
        for v, near in enumerate(self.adjacency):
            if self.alive[v] and self.mate[v] == -1:
                for w in near:
                    if self.alive[w] and self.mate[w] == -1:
                        self.mate[v], self.mate[w] = w, v
                        self.size += 1
                        break
        for v in range(len(self.adjacency)):
            if self.alive[v] and self.mate[v] == -1:
                self._augment(v)

    def without(self, *leaving: int) -> _Matching:
        """A copy with ``leaving`` removed, still maximum."""
        rest = _Matching(self.adjacency)
        rest.alive, rest.mate, rest.size = [*self.alive], [*self.mate], self.size
        freed: list[int] = []
        for v in leaving:
            rest.alive[v] = False
            w = rest.mate[v]
            if w != -1:
                rest.mate[v] = rest.mate[w] = -1
                rest.size -= 1
                freed.append(w)
        for w in freed:
            if rest.alive[w] and rest.mate[w] == -1:
                rest._augment(w)
        return rest

    def _augment(self, root: int) -> bool:
        """Grow the matching along an augmenting path from the free ``root``, if there is one."""
        n = len(self.adjacency)
        mate, alive = self.mate, self.alive
        parent = [-1] * n
        base = list(range(n))
        in_tree = [False] * n
        in_tree[root] = True
        queue = [root]

        def common_base(a: int, b: int) -> int:
            seen = [False] * n
            while True:
                a = base[a]
                seen[a] = True
                if mate[a] == -1:
                    break
                a = parent[mate[a]]
            while True:
                b = base[b]
                if seen[b]:
                    return b
                b = parent[mate[b]]

        def mark(v: int, stem: int, child: int, blossom: list[bool]) -> None:
            while base[v] != stem:
                blossom[base[v]] = blossom[base[mate[v]]] = True
                parent[v] = child
                child = mate[v]
                v = parent[mate[v]]

        head = 0
        while head < len(queue):
            v = queue[head]
            head += 1
            for to in self.adjacency[v]:
                if not alive[to] or base[v] == base[to] or mate[v] == to:
                    continue
                if to == root or (mate[to] != -1 and parent[mate[to]] != -1):
                    # An odd cycle: contract it into one blossom with a shared base.
                    stem = common_base(v, to)
                    blossom = [False] * n
                    mark(v, stem, to, blossom)
                    mark(to, stem, v, blossom)
                    for u in range(n):
                        if blossom[base[u]]:
                            base[u] = stem
                            if not in_tree[u]:
                                in_tree[u] = True
                                queue.append(u)
                elif parent[to] == -1:
                    parent[to] = v
                    if mate[to] == -1:
                        while to != -1:
                            previous = mate[parent[to]]
                            mate[to], mate[parent[to]] = parent[to], to
                            to = previous
                        self.size += 1
                        return True
                    in_tree[mate[to]] = True
                    queue.append(mate[to])
        return False
