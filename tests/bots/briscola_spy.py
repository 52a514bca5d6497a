"""A hostile entrant: it fails, saying ``LEAK`` on stderr, as soon as any event or
observation shows it a card another seat drew (the turned-up trump aside). In Briscola
every draw but the trump is face down; in tressette a due every draw is shown to both."""

from __future__ import annotations

import sys

from tavolo_bot import Bot, Turn, run
from tavolo_bot.proto import referee_pb2 as pb


class Spy(Bot):
    def __init__(self) -> None:
        self.leaks: list[str] = []

    def on_event(self, event: pb.Event) -> None:
        kind = event.WhichOneof("event")
        if kind == "card_drawn":
            self.leaks.append(f"card_drawn {event.card_drawn.seat} {event.card_drawn.card}")

    def choose(self, turn: Turn) -> int:
        obs = turn.observation
        for d in obs.draws:
            if d.seat != obs.seat and d.card != obs.trump:
                self.leaks.append(f"draw of seat {d.seat}: {d.card}")
        if self.leaks:
            print("LEAK", self.leaks[:3], file=sys.stderr, flush=True)
            sys.exit(3)
        return turn.legal[0].id


if __name__ == "__main__":
    run(Spy)
