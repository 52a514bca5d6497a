"""A uniformly random legal action, reproducible from ``TAVOLO_SEED``.

    TAVOLO_REFEREE=localhost:50051 TAVOLO_TICKET=... python -m tavolo_bot.bots.random

The seed text is ``TAVOLO_SEED`` (default: the ticket); when the process plays several
tickets, stream ``i`` (from 0) uses ``f"{seed}/{i}"``. Each game draws from its own
generator, seeded with ``f"{seed text}/game/{n}"`` when ``GameStarted`` for game ``n``
arrives: a match resumed at game ``n`` by a new process plays it exactly as the first
process would have.
"""

from __future__ import annotations

import os
import random
from typing import NoReturn

from tavolo_bot.bot import Bot
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.runner import main as run_main
from tavolo_bot.turn import Turn


class RandomBot(Bot):
    """Picks uniformly among the legal actions."""

    def __init__(self, seed: str | None = None) -> None:
        self._seed = seed
        self._rng: random.Random | None = None

    def seed_text(self) -> str:
        """The seed this stream uses: the one given, else as the module docstring says."""
        if self._seed is not None:
            return self._seed
        seed = os.environ.get("TAVOLO_SEED", self.ticket)
        return f"{seed}/{self.stream_index}" if self.stream_count > 1 else seed

    def on_event(self, event: pb.Event) -> None:
        """A fresh generator for each game (see the module docstring)."""
        if event.WhichOneof("event") == "game_started":
            self._rng = random.Random(f"{self.seed_text()}/game/{event.game_started.game}")

    def choose(self, turn: Turn) -> int:
        """A uniform choice; ``randrange`` like the referee's in-process random player."""
        # Without a GameStarted first (a bare test referee): one generator for the stream.
        if self._rng is None:
            self._rng = random.Random(self.seed_text())
        legal = turn.legal
        return legal[self._rng.randrange(len(legal))].id


def main() -> NoReturn:
    """Play the tickets of the environment."""
    run_main(RandomBot)


if __name__ == "__main__":
    main()
