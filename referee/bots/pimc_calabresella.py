"""pimc's Calabresella: every step of a deal (placeholder until the search lands here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from referee.engine.rules import Rules
from tavolo_bot.bots.heuristic import choose_action
from tavolo_bot.turn import Turn

if TYPE_CHECKING:
    from referee.bots.pimc import PimcBot


def choose_calabresella(bot: PimcBot, turn: Turn, rules: Rules, started: float) -> int:
    """The action for a Calabresella request (``started``: when the request came, monotonic)."""
    return choose_action(turn, rules.target).id
