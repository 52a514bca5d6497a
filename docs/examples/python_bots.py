"""Python bots played in the referee's process: a function, and an SDK bot that listens.

    python python_bots.py match.jsonl                       # two matches here; a record
    tavolo play py:python_bots:Tally heuristic --seed doc   # Tally as a bot process

docs/writing-a-bot.md shows this file and runs each of these commands.
"""

from tavolo_bot import Bot, Turn, points_in_thirds, strength
from tavolo_bot.proto import referee_pb2 as pb


def cheapest(turn: Turn) -> int:
    """Declare what is offered, else play the card worth least, with no signal."""
    if turn.declarations():
        return turn.declarations()[0].id
    quiet = [a for a in turn.plays() if not a.signal]
    if not quiet:
        return turn.legal[0].id  # the end of the declarations, say
    return min(quiet, key=lambda a: (points_in_thirds(a.card), strength(a.card))).id


class Tally(Bot):
    """Plays as ``cheapest``, and counts the tricks its side takes from the events."""

    def __init__(self) -> None:
        self.seat = 0
        self.tricks = 0

    def on_event(self, event: pb.Event) -> None:
        if event.HasField("game_started"):
            self.seat = event.game_started.seat
        elif event.HasField("trick_won") and event.trick_won.winner % 2 == self.seat % 2:
            self.tricks += 1  # partners sit opposite: seats 0 and 2, 1 and 3

    def choose(self, turn: Turn) -> int:
        return cheapest(turn)


if __name__ == "__main__":
    import sys

    from referee.local_play import play_bots

    # A function is a bot, named after itself; so is a Bot class.
    result = play_bots("tressette", [cheapest, "random"], seed="doc", deals=2)
    print(" ".join(f"{s.name}: {s.wins} of {s.games} won" for s in result.stats))

    made: list[Tally] = []

    def tally() -> Tally:
        """One bot for each seat of its side, kept to be read after the match."""
        made.append(Tally())
        return made[-1]

    with open(sys.argv[1], "w", encoding="utf-8") as record:
        result = play_bots("tressette", [tally, "heuristic"], seed="doc", deals=2, record=record)
    print(" ".join(f"{s.name}: {s.wins} of {s.games} won" for s in result.stats))
    print("tricks of tally's side, counted by each of its bots:", [b.tricks for b in made])
