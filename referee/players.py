"""Built-in players that run inside the referee's process (``--in-process``)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from referee.engine.actions import Action
from referee.engine.tressette import Observation


class Player(Protocol):
    """Chooses an action for one seat."""

    def act(self, observation: Observation, legal: tuple[Action, ...]) -> Action:
        """One of ``legal``, given what the seat may know."""
        ...


class RandomPlayer:
    """A uniformly random legal action, reproducible from its seed text."""

    def __init__(self, seed: str) -> None:
        self._rng = random.Random(seed)

    def act(self, observation: Observation, legal: tuple[Action, ...]) -> Action:
        """A uniform choice among the legal actions."""
        return legal[self._rng.randrange(len(legal))]


BUILT_IN: dict[str, Callable[[str], Player]] = {"random": RandomPlayer}
"""Built-in players by entry name; each is made from a seed text."""


class UnknownPlayerError(ValueError):
    """An entry that names no built-in player."""


def make_player(name: str, seed: str) -> Player:
    """The built-in player ``name``, seeded with ``seed``."""
    try:
        return BUILT_IN[name](seed)
    except KeyError:
        raise UnknownPlayerError(
            f"unknown built-in player {name!r}; built-in players are {', '.join(BUILT_IN)}"
        ) from None
