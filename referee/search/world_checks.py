"""What every family's world sampler shares: the plays in order, the check that a
replayed world shows the seat its observation, and the twin cards a search need try
only once."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TypeVar

from referee.engine.observation import Observation
from referee.families.calabresella.deal import CalabresellaObservation

View = TypeVar("View", Observation, CalabresellaObservation)


class Inconsistent(ValueError):
    """An observation no deal can produce: the seat's view contradicts the rules."""


def plays_in_order(obs: Observation | CalabresellaObservation) -> list[tuple[int, int]]:
    """Every card played this deal, ``(seat, action)``, the trick being played last."""
    out = [play for plays, _ in obs.tricks for play in plays]
    out.extend(obs.trick)
    return out


def same_view(got: View, obs: View) -> bool:
    """Whether ``got`` (what a replayed world shows the seat) is exactly ``obs``, the legal
    actions in any order."""
    if set(got.legal_actions) != set(obs.legal_actions):
        return False
    return got == dataclasses.replace(obs, legal_actions=got.legal_actions)


def without_twins(cards: Sequence[int], out_of_play: int, worth: Sequence[int]) -> list[int]:
    """``cards`` less each one with a twin earlier in the list: a card of the same suit and
    ``worth`` (by card id), every card ranked between them in ``out_of_play`` (the seat's
    own, played, discarded). Either twin leaves a hand that takes the same tricks, so they
    score alike in every world."""
    kept: list[int] = []
    for card in cards:
        for other in kept:
            low, high = min(other, card), max(other, card)
            between = ((1 << high) - 1) & ~((2 << low) - 1)
            if (
                other // 10 == card // 10
                and worth[other] == worth[card]
                and between & ~out_of_play == 0
            ):
                break
        else:
            kept.append(card)
    return kept
