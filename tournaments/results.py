"""Stored games as pairwise results (for ratings and SPRT) and per-entry tallies."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from referee.engine.game_base import rank_sides
from referee.match.results import Faults, GameTally
from tournaments.ratings import PairResult
from tournaments.storage import GameRow


def pair_results(
    games: Iterable[GameRow], seats_of_side: Sequence[Sequence[int]], *, lower_wins: bool = False
) -> list[PairResult]:
    """One result per pair of sides of every game; a game's duplicate set is its set key.

    Each pair is decided by the places the game gave its sides (the better place scores
    1, a shared one 0.5 each). Only a game stored before places were kept has them worked
    out here, by the engine's own :func:`rank_sides` from its totals and forfeit
    (``lower_wins`` as in ciapanò).
    """
    out: list[PairResult] = []
    for game in games:
        key = f"{game.match_id}:{game.set_number}"
        places = places_of(game, seats_of_side, lower_wins)
        for i, j in combinations(range(len(game.sides)), 2):
            out.append(PairResult(key, game.sides[i], game.sides[j], _pair_score(places, i, j)))
    return out


def places_of(
    game: GameRow, seats_of_side: Sequence[Sequence[int]], lower_wins: bool
) -> tuple[int, ...]:
    """The places ``game`` gave its sides, as stored; for a game stored before places
    were, from its winner (two sides) or the engine's ranking of its totals."""
    if game.places is not None:
        return game.places
    if len(game.sides) == 2:
        return (0, 0) if game.winner is None else (int(game.winner != 0), int(game.winner != 1))
    return rank_sides(game.totals, lower_wins, last=forfeit_side(game, seats_of_side))


def forfeit_side(game: GameRow, seats_of_side: Sequence[Sequence[int]]) -> int | None:
    """The side whose seat forfeited ``game``, or None if no seat did."""
    if game.forfeit_seat is None:
        return None
    for side, seats in enumerate(seats_of_side):
        if game.forfeit_seat in seats:
            return side
    return None


def _pair_score(places: Sequence[int], i: int, j: int) -> float:
    return 1.0 if places[i] < places[j] else 0.5 if places[i] == places[j] else 0.0


@dataclass
class Tally(GameTally):
    """What one entry did over the stored games."""

    score: float = 0.0
    """Pairwise score: a win over each side beaten (two sides: 1 a win, 0.5 a draw)."""
    pair_games: int = 0
    """Pairwise games the score is out of."""
    deal_points: list[int] = field(default_factory=list)
    """The entry's side's points in every finished deal."""
    faults: Faults = field(default_factory=Faults)
    """Its timeouts, illegal actions and crashes over the stored games."""
    opponents: list[str] = field(default_factory=list)
    """Every opponent of every pairwise game."""

    @property
    def score_percent(self) -> float:
        return 100.0 * self.score / self.pair_games if self.pair_games else 0.0

    @property
    def points_per_deal(self) -> tuple[float, float]:
        """Mean points per deal and its standard error."""
        n = len(self.deal_points)
        if n == 0:
            return 0.0, 0.0
        mean = sum(self.deal_points) / n
        if n == 1:
            return mean, 0.0
        var = sum((p - mean) ** 2 for p in self.deal_points) / (n - 1)
        return mean, math.sqrt(var / n)


def tallies(
    names: Sequence[str],
    games: Iterable[GameRow],
    seats_of_side: Sequence[Sequence[int]],
    *,
    lower_wins: bool = False,
) -> dict[str, Tally]:
    """Per-entry tallies of ``games``, for every entry in ``names``."""
    out = {n: Tally(n) for n in names}
    for game in games:
        places = places_of(game, seats_of_side, lower_wins)
        for side, name in enumerate(game.sides):
            t = out[name]
            t.count(game.winner, side)
            t.deal_points.extend(points[side] for points in game.deal_points)
            f = game.faults.get(name, Faults())
            t.faults = Faults(*(a + b for a, b in zip(t.faults, f, strict=True)))
            for other in range(len(game.sides)):
                if other == side:
                    continue
                i, j = min(side, other), max(side, other)
                s = _pair_score(places, i, j)
                t.score += s if side == i else 1.0 - s
                t.pair_games += 1
                t.opponents.append(game.sides[other])
    return out


def match_points(games: Sequence[GameRow]) -> dict[str, float]:
    """A two-sided match's points: 1 to the entry with the better game score, 0.5 each if even."""
    score: dict[str, float] = {}
    for game in games:
        for side, name in enumerate(game.sides):
            win = 0.5 if game.winner is None else float(game.winner == side)
            score[name] = score.get(name, 0.0) + win
    if len(score) != 2:
        return {n: 0.5 for n in score}
    (a, sa), (b, sb) = score.items()
    if sa == sb:
        return {a: 0.5, b: 0.5}
    return {a: float(sa > sb), b: float(sb > sa)}


def faulted_sides(game: GameRow, seats_of_side: Sequence[Sequence[int]]) -> set[int]:
    """The sides of ``game`` whose entry faulted in it: it forfeited the game (a crash, a
    lost or absent bot, a timeout, too many illegal actions), or the referee had to play
    for it (``on_fault = "random"``: a timeout or a crash counted).

    Illegal actions that the bot then put right are no fault of the game.
    """
    out = set()
    forfeit = forfeit_side(game, seats_of_side)
    if forfeit is not None:
        out.add(forfeit)
    for side, name in enumerate(game.sides):
        faults = game.faults.get(name, Faults())
        if faults.timeouts or faults.crashes:
            out.add(side)
    return out


def always_faulted(
    games: Iterable[GameRow], seats_of_side: Sequence[Sequence[int]]
) -> dict[str, tuple[int, int, int]]:
    """Entries that faulted (:func:`faulted_sides`) in every stored game they played:
    name -> (games played, match id, game number of the last of them).

    Such an entry's results say nothing about its play; the run reports it.
    """
    played: dict[str, int] = {}
    clean: set[str] = set()
    last: dict[str, tuple[int, int]] = {}
    for game in games:
        faulty = faulted_sides(game, seats_of_side)
        for side, name in enumerate(game.sides):
            played[name] = played.get(name, 0) + 1
            if side in faulty:
                last[name] = (game.match_id, game.number)
            else:
                clean.add(name)
    return {
        name: (count, *last[name])
        for name, count in played.items()
        if name not in clean and name in last
    }
