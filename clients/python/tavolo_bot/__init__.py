"""The Tavolo bot SDK: subclass :class:`Bot`, implement ``choose``, and call :func:`run`.

from tavolo_bot import Bot, Turn, run

class FirstLegal(Bot):
    def choose(self, turn: Turn) -> int:
        return turn.legal[0].id

if __name__ == "__main__":
    raise SystemExit(run(FirstLegal))
"""

from tavolo_bot.bot import Bot
from tavolo_bot.cards import (
    CARDS,
    RANKS,
    SIGNAL_NAMES,
    SUITS,
    beats,
    is_card,
    points_in_thirds,
    rank_of,
    signal_name,
    sort_cards,
    strength,
    suit_of,
    winning_card,
)
from tavolo_bot.runner import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    PROTOCOL_VERSION,
    ConfigError,
    Settings,
    load_settings,
    main,
    run,
    run_async,
)
from tavolo_bot.turn import Turn, card_of, is_declaration, is_play

__all__ = [
    "CARDS",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "PROTOCOL_VERSION",
    "RANKS",
    "SIGNAL_NAMES",
    "SUITS",
    "Bot",
    "ConfigError",
    "Settings",
    "Turn",
    "beats",
    "card_of",
    "is_card",
    "is_declaration",
    "is_play",
    "load_settings",
    "main",
    "points_in_thirds",
    "rank_of",
    "run",
    "run_async",
    "signal_name",
    "sort_cards",
    "strength",
    "suit_of",
    "winning_card",
]
