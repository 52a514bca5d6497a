"""The Tavolo bot SDK: subclass :class:`Bot`, implement ``choose``, and call :func:`run`.

from tavolo_bot import Bot, Turn, run

class FirstLegal(Bot):
    def choose(self, turn: Turn) -> int:
        return turn.legal[0].id

if __name__ == "__main__":
    raise SystemExit(run(FirstLegal))

Importing the package sets ``GRPC_EXPERIMENTS`` (see :data:`GRPC_EXPERIMENTS`) unless the
environment already has it.
"""

import os as _os

GRPC_EXPERIMENTS = "-event_engine_client,-event_engine_listener"
"""gRPC core's own poller instead of EventEngine, which hands every message to three more
threads; on two cores that cut a decision's round trip through the referee by about a
third. gRPC reads the variable once, when it loads, so it is set here, before this package
imports grpc; import ``tavolo_bot`` before ``grpc`` to have it.
"""

_os.environ.setdefault("GRPC_EXPERIMENTS", GRPC_EXPERIMENTS)

from tavolo_bot.bot import Bot, game_seed, stream_seed  # noqa: E402
from tavolo_bot.cards import (  # noqa: E402
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
from tavolo_bot.runner import (  # noqa: E402
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
from tavolo_bot.turn import Turn, card_of, is_declaration, is_play  # noqa: E402

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
    "game_seed",
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
    "stream_seed",
    "strength",
    "suit_of",
    "winning_card",
]
