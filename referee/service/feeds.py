"""Each table's public events for spectators, and who else hears them in the process."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from tavolo_bot.proto import referee_pb2 as pb

KEPT_FEEDS = 256
"""Finished tables a referee keeps for spectators who come late."""


class FeedListener(Protocol):
    """Hears every table's public events in the referee's process, as ``Watch`` sends them
    (the live view). Called on the referee's event loop: it must be quick and not raise.

    A listener with a ``hears_events`` attribute that is False needs only tables opening
    and closing: for it, a head does not ask its shards for every event of every table
    (:mod:`referee.shard_pool`).
    """

    def table(self, feed: TableFeed) -> None:
        """A new table."""

    def event(self, feed: TableFeed, event: pb.Event) -> None:
        """A public event of ``feed``, its ``game`` being the game it belongs to."""

    def closed(self, feed: TableFeed) -> None:
        """The table is over."""


@dataclass
class TableFeed:
    """The public events of one table, for spectators."""

    table_id: str
    match_id: str
    entries: list[str]
    game: int = 0
    history: list[pb.Event] = field(default_factory=list)
    watchers: list[asyncio.Queue[pb.Event | None]] = field(default_factory=list)
    done: bool = False
    listeners: list[FeedListener] = field(default_factory=list)
    follow: Callable[[], Awaitable[None]] | None = None
    """A mirror of a shard's table: fetches its history and its events from then on;
    awaited before a spectator reads the history."""

    def publish(self, event: pb.Event) -> None:
        """Send a public event to every watcher and listener, and keep it for late ones."""
        self.history.append(event)
        for queue in self.watchers:
            queue.put_nowait(event)
        for listener in self.listeners:
            listener.event(self, event)

    def close(self) -> None:
        """The table is over: end every watch."""
        self.done = True
        for queue in self.watchers:
            queue.put_nowait(None)
        for listener in self.listeners:
            listener.closed(self)


def forget_old_feeds(feeds: dict[str, TableFeed]) -> None:
    """Drop the oldest finished tables beyond :data:`KEPT_FEEDS`, to make room for one."""
    done = [table for table, feed in feeds.items() if feed.done]
    for table in done[: max(0, len(done) - KEPT_FEEDS + 1)]:
        del feeds[table]
