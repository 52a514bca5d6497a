"""Every game family's game class, chosen by the rules: :func:`new_game`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from referee.engine.calabresella_game import CalabresellaGame
from referee.engine.deals import Deal
from referee.engine.game_base import GameBase
from referee.engine.rules import Rules
from referee.engine.tressette_game import TressetteGame

AnyGame = GameBase[Any, Any]
"""A game of any family: the state API, the record and faults are the same for all."""


def new_game(
    rules: Rules,
    seed: str,
    *,
    deals: int | None = None,
    seats: Sequence[str] | None = None,
    record: bool = False,
    deal_source: Callable[[int, int], Deal] | None = None,
) -> AnyGame:
    """A new game of ``rules.game`` (see :class:`~referee.engine.game.GameBase`)."""
    if rules.game == "calabresella":
        if deal_source is not None:
            raise ValueError("calabresella deals come from the seed only")
        return CalabresellaGame(rules, seed, deals=deals, seats=seats, record=record)
    return TressetteGame(
        rules, seed, deals=deals, seats=seats, record=record, deal_source=deal_source
    )
