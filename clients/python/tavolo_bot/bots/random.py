"""A uniformly random legal action, reproducible from ``TAVOLO_SEED``.

    TAVOLO_REFEREE=localhost:50051 TAVOLO_TICKET=... python -m tavolo_bot.bots.random

The seed text is the stream's :attr:`Bot.seed <tavolo_bot.Bot.seed>`: ``TAVOLO_SEED``
(default: the ticket); when the process plays several tickets, stream ``i`` (from 0) uses
``f"{seed}/{i}"``. Each game draws from its own generator, seeded with
:meth:`Bot.game_seed <tavolo_bot.Bot.game_seed>` (``f"{seed text}/game/{n}"``) when
``GameStarted`` for game ``n`` arrives: a match resumed at game ``n`` by a new process
plays it exactly as the first process would have.
"""

from __future__ import annotations

import os
import random
from typing import NoReturn

from tavolo_bot.bot import Bot, game_seed, stream_seed
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.runner import main as run_main
from tavolo_bot.turn import Turn


class RandomBot(Bot):
    """Picks uniformly among the legal actions."""

    def __init__(self, seed: str | None = None) -> None:
        self._seed = seed
        self._rng: random.Random | None = None

    def seed_text(self) -> str:
        """The seed this stream uses: the one given, else :attr:`Bot.seed` (set by ``run``).

        A bot made outside ``run`` (no ``seed`` set) reads ``TAVOLO_SEED`` itself, by the
        same rule (:func:`tavolo_bot.stream_seed`).
        """
        if self._seed is not None:
            return self._seed
        if self.seed:
            return self.seed
        env_seed = os.environ.get("TAVOLO_SEED", "")
        return stream_seed(env_seed, self.ticket, self.stream_index, self.stream_count)

    def on_event(self, event: pb.Event) -> None:
        """A fresh generator for each game (see the module docstring)."""
        if event.WhichOneof("event") == "game_started":
            self._rng = random.Random(game_seed(self.seed_text(), event.game_started.game))

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
