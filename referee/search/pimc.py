"""Perfect-information Monte Carlo: the action best on average over sampled worlds.

At a decision, worlds consistent with the seat's observation are sampled
(:mod:`referee.search.tressette_worlds`, :mod:`referee.search.briscola_worlds`, and
Calabresella's); in each, every candidate action is applied to a clone of the world and
the deal is played out by the family's greedy ``Playout``. The candidate with the best
mean worth wins; ties go to the earliest in the engine's order. Every candidate is tried
in the same worlds, so their differences are not drowned by the luck of the sample.

The search is anytime: it works world by world and stops after ``worlds`` worlds or
when ``seconds`` have passed, whichever comes first. Given the same observation and
``seed`` it is deterministic as long as the time limit does not stop it first.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, Self, TypeVar

from referee.engine.codec import Action
from referee.engine.observation import Observation
from referee.engine.rules import Rules
from referee.search import briscola_playout, briscola_worlds, tressette_playout, tressette_worlds

TRIES_PER_WORLD = 40
"""Draws allowed per world wanted before the search makes do with the worlds it has."""


@dataclass(frozen=True)
class SearchResult:
    """What one search found."""

    action: Action
    """The chosen action."""
    worth: dict[Action, float]
    """Mean worth of each candidate over the worlds searched."""
    worlds: int
    """Worlds searched."""
    draws: int
    """Draws of hidden cards made (those the engine refused were thrown away)."""
    timed_out: bool
    """Whether the time limit stopped the search before ``worlds`` worlds."""


class World(Protocol):
    """A deal of any family that search plays on."""

    def clone(self) -> Self: ...
    def apply_action(self, action: Action) -> None: ...


W = TypeVar("W", bound=World)
W_contra = TypeVar("W_contra", bound=World, contravariant=True)
L = TypeVar("L")


class Policy(Protocol[W_contra]):
    """Plays a world to the end of its deal, and says what the end is worth to a seat."""

    def play_out(self, deal: W_contra) -> None: ...
    def value(self, deal: W_contra, seat: int) -> float: ...


def search(
    candidates: Sequence[Action],
    seat: int,
    sample: Callable[[random.Random], W | None],
    policy: Policy[W],
    *,
    worlds: int,
    seconds: float,
    seed: str,
    clock: Callable[[], float] = time.monotonic,
) -> SearchResult:
    """The candidate with the best mean worth to ``seat`` over worlds drawn by ``sample``
    (None: a draw the engine refused), each candidate played out by ``policy``."""
    if not candidates:
        raise ValueError("nothing to choose from")
    if len(candidates) == 1:
        return SearchResult(candidates[0], {}, 0, 0, False)
    start = clock()
    rng = random.Random(seed)
    totals = dict.fromkeys(candidates, 0.0)
    done = draws = 0
    timed_out = False
    while done < worlds and draws < worlds * TRIES_PER_WORLD:
        if clock() - start >= seconds:
            timed_out = True
            break
        draws += 1
        world = sample(rng)
        if world is None:
            continue
        worths = []
        for action in candidates:
            deal = world.clone()
            deal.apply_action(action)
            policy.play_out(deal)
            worths.append(policy.value(deal, seat))
            if clock() - start >= seconds:
                break
        if len(worths) < len(candidates):
            timed_out = True  # a world counts whole or not at all
            break
        for action, value in zip(candidates, worths, strict=True):
            totals[action] += value
        done += 1
    if not done and timed_out:
        # Not one world in the time: the first candidate, in the engine's order.
        return SearchResult(candidates[0], {}, 0, draws, True)
    if not done:
        raise RuntimeError(f"no world consistent with seat {seat}'s observation in {draws} draws")
    worth = {a: t / done for a, t in totals.items()}
    best = max(candidates, key=lambda a: worth[a])
    return SearchResult(best, worth, done, draws, timed_out)


@dataclass(frozen=True)
class TrickSearch(Generic[L, W]):
    """:func:`search` in one family of card-and-trick deals, from an observation's seat:
    the family's worlds and its playout."""

    constraints: Callable[[Rules, Observation], L]
    """What the observation says of the hidden cards."""
    sample_world: Callable[[Rules, Observation, L, random.Random], W | None]
    """One world within those constraints, or None when the engine refused the draw."""
    playout: Callable[[Rules], Policy[W]]
    """The policy that plays a world out, for these rules."""
    twins_removed: Callable[[Rules, Observation, list[Action]], list[Action]]
    """The seat's cards less those that score as another does in every world."""

    def __call__(
        self,
        rules: Rules,
        obs: Observation,
        candidates: Sequence[Action],
        *,
        worlds: int,
        seconds: float,
        seed: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> SearchResult:
        """The best of ``candidates`` (:func:`search`) for ``obs``'s seat."""
        lim = self.constraints(rules, obs)
        return search(
            candidates,
            obs.seat,
            lambda rng: self.sample_world(rules, obs, lim, rng),
            self.playout(rules),
            worlds=worlds,
            seconds=seconds,
            seed=seed,
            clock=clock,
        )


search_tressette = TrickSearch(
    tressette_worlds.constraints,
    tressette_worlds.sample_world,
    tressette_playout.Playout,
    tressette_worlds.twins_removed,
)
""":func:`search` for a deal of the Tressette families."""
search_briscola = TrickSearch(
    briscola_worlds.constraints,
    briscola_worlds.sample_world,
    briscola_playout.Playout,
    briscola_worlds.twins_removed,
)
""":func:`search` for a deal of Briscola."""
