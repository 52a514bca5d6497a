"""Entrant keys: one secret per remote entrant for a whole tournament.

A bot opens streams with its entrant's key (``Hello.key``); each stream hears
``KeyAccepted``, then is seated in the entrant's matches one after the other, each from
``Welcome`` to ``MatchOver`` exactly as a ticket's stream is. A stream lost mid-match comes
back to the slot it left. Keys are stored only as SHA-256 digests (the tournament's
database), so a key read from the database opens nothing.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from referee.match.slots import FLOOD_LIMIT, Slot, SlotError, parse_request
from tavolo_bot.proto import referee_pb2 as pb

MAX_STREAMS = 32
"""Streams one entrant may hold open at once: enough for many tables, not a flood."""
KEY_PREFIX = "tvk_"
"""What every entrant key starts with, so one is told from a ticket at a glance."""

KeyLookup = Callable[[str], "tuple[str, bool] | None"]
"""A key's digest -> (entrant, revoked), or None for a key no entrant has."""


def new_key() -> str:
    """A fresh unguessable entrant key."""
    return KEY_PREFIX + secrets.token_urlsafe(24)


def key_digest(key: str) -> str:
    """What is stored of a key: its SHA-256, in hex."""
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(eq=False)
class _Stream:
    """One open stream of an entrant's key."""

    digest: str
    context: Any
    link: Slot | None = None
    """The slot it plays now; None while it waits to be seated."""
    gone: bool = False
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    unsolicited: int = 0


@dataclass(eq=False)
class _Entrant:
    name: str
    streams: list[_Stream] = field(default_factory=list)
    wanted: list[Slot] = field(default_factory=list)
    """Slots of started matches that wait for a stream of this entrant, oldest first."""
    seated: list[Slot] = field(default_factory=list)
    """Slots a stream of this entrant took and whose match is not over."""
    matches_left: int | None = None
    """Matches not finished yet; None while unknown (a Swiss round not paired yet)."""
    done: bool = False
    """No match is left: streams are ended with status OK."""


class EntrantKeys:
    """The entrants of one tournament run that play with keys, and their open streams."""

    def __init__(self, lookup: KeyLookup, *, streams_per_table: int) -> None:
        self._lookup = lookup
        self.streams_per_table = streams_per_table
        self._entrants: dict[str, _Entrant] = {}
        self.on_change: Callable[[], None] | None = None
        """Called when a stream arrives, leaves a table or goes (the scheduler listens)."""

    def add(self, name: str, matches_left: int | None) -> None:
        """Entrant ``name`` plays with a key, ``matches_left`` matches to go (None: unknown)."""
        self._entrants[name] = _Entrant(name, matches_left=matches_left)

    def knows(self, name: str) -> bool:
        """Whether entrant ``name`` plays with a key."""
        return name in self._entrants

    def idle(self, name: str) -> int:
        """Streams of ``name`` open now and waiting to be seated."""
        entrant = self._entrants[name]
        return sum(1 for s in entrant.streams if s.link is None and not s.gone)

    def set_matches_left(self, name: str, count: int | None) -> None:
        """How many matches ``name`` has left; at 0 its waiting streams end with OK."""
        entrant = self._entrants[name]
        entrant.matches_left = count
        entrant.done = count == 0
        if entrant.done:
            for stream in entrant.streams:
                stream.wake.set()

    def close(self) -> None:
        """The run is over: every waiting stream ends with OK."""
        for name in self._entrants:
            self.set_matches_left(name, 0)

    def absence(self, name: str) -> str:
        """Why a slot of ``name`` got no stream: for the never-connected fault line."""
        entrant = self._entrants[name]
        open_ = [s for s in entrant.streams if not s.gone]
        if not open_:
            return f"entrant {name!r} had no stream open with its key"
        busy = sum(1 for s in open_ if s.link is not None)
        return (
            f"entrant {name!r} had {len(open_)} stream(s) open with its key, {busy} of them "
            f"at other tables; a table takes {self.streams_per_table} (TAVOLO_STREAMS)"
        )

    # -- a match's side ----------------------------------------------------------------

    def want(self, name: str, links: list[Slot]) -> None:
        """Seat streams of ``name`` in ``links`` as they become free (a match has started)."""
        entrant = self._entrants[name]
        entrant.wanted.extend(links)
        for stream in entrant.streams:
            stream.wake.set()

    def withdraw(self, links: list[Slot]) -> None:
        """A match is over: its slots want no stream any more."""
        gone = set(map(id, links))
        for entrant in self._entrants.values():
            entrant.wanted = [link for link in entrant.wanted if id(link) not in gone]
            entrant.seated = [link for link in entrant.seated if id(link) not in gone]

    # -- the servicer's side -----------------------------------------------------------

    def accept(self, key: str) -> str:
        """The entrant ``key`` belongs to; SlotError if it is no key, or a revoked one."""
        found = self._lookup(key_digest(key))
        if found is None or found[0] not in self._entrants:
            raise SlotError(
                grpc.StatusCode.UNAUTHENTICATED, "unknown_key", "no entrant has this key"
            )
        name, revoked = found
        if revoked:
            raise _revoked(name)
        entrant = self._entrants[name]
        if sum(1 for s in entrant.streams if not s.gone) >= MAX_STREAMS:
            raise SlotError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too_many_streams",
                f"entrant {name!r} has {MAX_STREAMS} streams open already",
            )
        return name

    async def serve(self, key: str, context: Any, *, compact: bool = False) -> None:
        """A key's stream from KeyAccepted to its end; SlotError says why it is refused.

        ``compact``: its Hello asked for compact observations, in every match it plays.
        """
        name = self.accept(key)
        entrant = self._entrants[name]
        stream = _Stream(key_digest(key), context)
        entrant.streams.append(stream)
        reader = asyncio.ensure_future(self._read(stream))
        try:
            left = entrant.matches_left if entrant.matches_left is not None else 0
            accepted = pb.KeyAccepted(
                entrant=name, streams_per_table=self.streams_per_table, matches_left=left
            )
            await context.write(pb.PlayResponse(events=[pb.Event(key_accepted=accepted)]))
            self._changed()
            while True:
                link = self._take(entrant)
                if link is None:
                    if entrant.done or stream.gone:
                        break
                    stream.wake.clear()
                    await _first(stream.wake.wait(), reader)
                    continue
                self._check_revoked(stream, name)
                stream.link = link
                await link.attach(context, compact=compact)
                await _first(link.finished.wait(), reader)
                link.detach(context)
                stream.link = None
                self._changed()
                if stream.gone:
                    break
        finally:
            if stream.link is not None:
                stream.link.detach(context)
            stream.gone = True
            entrant.streams.remove(stream)
            reader.cancel()
            self._changed()
        if reader.done() and not reader.cancelled():
            error = reader.exception()
            if error is not None:
                raise error  # a SlotError: the servicer ends the stream with its status

    def _check_revoked(self, stream: _Stream, name: str) -> None:
        found = self._lookup(stream.digest)
        if found is None or found[1]:
            raise _revoked(name)

    def _take(self, entrant: _Entrant) -> Slot | None:
        """The slot a free stream of ``entrant`` plays next: one its lost stream left
        mid-match first, then the oldest waiting one."""
        for link in entrant.seated:
            if not link.closed and not link.connected and link.ever_connected:
                return link
        while entrant.wanted:
            link = entrant.wanted.pop(0)
            if not link.closed:
                entrant.seated.append(link)
                return link
        return None

    async def _read(self, stream: _Stream) -> None:
        """Read the stream: messages go to the slot it plays; nothing is asked while it waits."""
        try:
            while (raw := await stream.context.read()) is not grpc.aio.EOF:
                link = stream.link
                if link is not None:
                    link.receive(raw)
                    continue
                message = parse_request(raw)
                if message.HasField("hello"):
                    raise SlotError(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        "repeated_hello",
                        "Hello is sent only once",
                    )
                stream.unsolicited += 1
                if stream.unsolicited > FLOOD_LIMIT:
                    raise SlotError(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        "flood",
                        f"more than {FLOOD_LIMIT} messages while waiting for a table",
                    )
        finally:
            stream.gone = True
            stream.wake.set()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()


def _revoked(name: str) -> SlotError:
    """The refusal of a key the organiser revoked (or replaced)."""
    return SlotError(
        grpc.StatusCode.PERMISSION_DENIED,
        "key_revoked",
        f"the organiser revoked the key of entrant {name!r}",
    )


async def _first(wait: Any, reader: asyncio.Future[None]) -> None:
    """Wait for ``wait`` or for the stream's reader to end, whichever is first."""
    waiter = asyncio.ensure_future(wait)
    try:
        await asyncio.wait({waiter, reader}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
