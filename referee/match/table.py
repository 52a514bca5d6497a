"""The table: which entry sits at which side in each game of a duplicate set, and which of
its slots takes which seat."""

from __future__ import annotations

import itertools
import math

from referee.engine.rules import Rules


def seat_slots(rules: Rules, arrangement: tuple[int, ...]) -> list[tuple[int, int]]:
    """(entry, slot) at each seat when entry ``e`` sits at side ``arrangement[e]``: its
    slot ``k`` takes the ``k``-th seat of that side."""
    out: list[tuple[int, int] | None] = [None] * rules.players
    for e, side in enumerate(arrangement):
        for k, seat in enumerate(rules.seats_of(side)):
            out[seat] = (e, k)
    assert all(x is not None for x in out)
    return [x for x in out if x is not None]


def arrangements(rules: Rules) -> tuple[tuple[int, ...], ...]:
    """The seatings of a duplicate set: for each game, the side of each entry.

    Every arrangement of the entries over the sides: two sides swap; three or four players
    each alone take every order (6 or 24 games), so each entry meets each deal from every
    seat, after every other entry and before it. The first ``sides`` are the rotations.
    """
    sides = rules.sides
    rotations_first = [tuple((e + r) % sides for e in range(sides)) for r in range(sides)]
    others = [p for p in itertools.permutations(range(sides)) if p not in rotations_first]
    return tuple(rotations_first + others)


def rotations(rules: Rules) -> int:
    """Games per duplicate set: one per arrangement of the entries over the sides."""
    return math.factorial(rules.sides)
