"""The class a bot author subclasses, and the seed texts the SDK gives every stream."""

from __future__ import annotations

from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.turn import Turn


def stream_seed(seed: str, ticket: str, index: int = 0, count: int = 1) -> str:
    """The seed text of stream ``index`` (from 0) of ``count``: what :attr:`Bot.seed` holds.

    ``seed`` is ``TAVOLO_SEED`` (:attr:`Settings.seed <tavolo_bot.Settings.seed>`); empty
    means unset, and then the stream's own ticket is the seed. With several tickets,
    ``f"/{index}"`` is appended, so no two streams of a process share a seed.
    """
    text = seed or ticket
    return f"{text}/{index}" if count > 1 else text


def game_seed(seed: str, game: int) -> str:
    """The seed text of game ``game`` (``GameStarted.game``) of a stream seeded ``seed``.

    ``f"{seed}/game/{game}"``: seeding each game afresh from it makes a match resumed at a
    later game (by a new process) play that game exactly as an uninterrupted run would.
    """
    return f"{seed}/game/{game}"


class Bot:
    """A player for one ticket: implement :meth:`choose`; the hooks are optional.

    :func:`tavolo_bot.run` makes one instance per ticket, so instance attributes are
    per-stream state. It sets ``ticket``, ``stream_index``, ``stream_count`` and ``seed``
    before the first hook is called (after ``__init__``).
    """

    ticket: str = ""
    """The ticket this instance plays (a secret: do not print it)."""
    stream_index: int = 0
    """Position of the ticket in the ticket list, from 0."""
    stream_count: int = 1
    """How many tickets this process plays."""
    seed: str = ""
    """This stream's seed text for any randomness: ``TAVOLO_SEED``, or the ticket when that
    is unset, with ``f"/{stream_index}"`` appended when the process plays several tickets
    (:func:`stream_seed`)."""

    def game_seed(self, game: int) -> str:
        """The seed text of game ``game`` of this stream: ``f"{self.seed}/game/{game}"``.

        Seed a fresh generator with it when ``GameStarted`` arrives (``event.game_started
        .game``), and a resumed match replays the game exactly.
        """
        return game_seed(self.seed, game)

    def choose(self, turn: Turn) -> int | pb.Action:
        """The id of one of ``turn.legal`` (or that ``Action`` itself)."""
        raise NotImplementedError(f"{type(self).__name__} must implement choose(self, turn)")

    def on_event(self, event: pb.Event) -> None:
        """Called for every event the referee sends, in order, before any request that follows."""

    def on_match_over(self) -> None:
        """Called once, right after the ``MatchOver`` event."""
