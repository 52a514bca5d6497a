"""The class a bot author subclasses."""

from __future__ import annotations

from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.turn import Turn


class Bot:
    """A player for one ticket: implement :meth:`choose`; the hooks are optional.

    :func:`tavolo_bot.run` makes one instance per ticket, so instance attributes are
    per-stream state. It sets ``ticket``, ``stream_index`` and ``stream_count`` before
    the first hook is called.
    """

    ticket: str = ""
    """The ticket this instance plays (a secret: do not print it)."""
    stream_index: int = 0
    """Position of the ticket in the ticket list, from 0."""
    stream_count: int = 1
    """How many tickets this process plays."""

    def choose(self, turn: Turn) -> int | pb.Action:
        """The id of one of ``turn.legal`` (or that ``Action`` itself)."""
        raise NotImplementedError(f"{type(self).__name__} must implement choose(self, turn)")

    def on_event(self, event: pb.Event) -> None:
        """Called for every event the referee sends, in order, before any request that follows."""

    def on_match_over(self) -> None:
        """Called once, right after the ``MatchOver`` event."""
