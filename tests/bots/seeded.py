"""A bot whose every choice depends on its seed, on what it heard and on what it sees: two
runs play alike only if they give it the same seed, events and observations.

    TAVOLO_REFEREE=host:port TAVOLO_TICKET=... python tests/bots/seeded.py
"""

from __future__ import annotations

import random

from tavolo_bot import Bot, Turn, main
from tavolo_bot.proto import referee_pb2 as pb


class Seeded(Bot):
    def __init__(self) -> None:
        self.rng = random.Random()
        self.heard: list[str] = []

    def on_event(self, event: pb.Event) -> None:
        kind = event.WhichOneof("event") or ""
        if kind == "game_started":  # each game afresh, as a sandboxed process plays it
            self.rng = random.Random(self.game_seed(event.game_started.game))
            self.heard = []
        self.heard.append(kind)

    def choose(self, turn: Turn) -> int:
        # A seeded draw, shifted by what was heard and seen: any difference shows.
        shift = len(turn.played_cards) + len(turn.hand) + len(self.heard)
        legal = turn.legal
        return legal[(self.rng.randrange(len(legal)) + shift) % len(legal)].id


if __name__ == "__main__":
    main(Seeded)
