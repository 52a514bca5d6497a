"""What the head and its referee shards say to each other, and how it travels.

Each message is a small NamedTuple, pickled and framed by its length (4 bytes,
big-endian) on the socketpair the head makes for each shard (:mod:`referee.shard_pool`).
A shard is started from the head's own install, so both sides always run the same
version of these types: nothing here is kept compatible across versions. The head is the
only peer: the socketpair reaches no bot, since every bot runs in a sandbox of its own.
"""

from __future__ import annotations

import asyncio
import pickle
import struct
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from referee.match.config import MatchConfig
from referee.match.results import DealReport, GameReport

if TYPE_CHECKING:
    from referee.shard_pool import OrganiserSettings, ShardSpec

HEADER = struct.Struct(">I")
"""Every message's length, before it."""

# -- from the head to a shard ------------------------------------------------------------


class Init(NamedTuple):
    """The shard's first message: how its referee listens and what it runs."""

    spec: ShardSpec
    organiser: OrganiserSettings | None
    """``tavolo serve``'s settings: the shard runs an organiser; None for a tournament."""
    log_mb: int | None
    """The head's cap on every shard's bots' logs together (None: no cap)."""
    public_names: bool


class Play(NamedTuple):
    """Play games ``games`` of a match as job ``job``."""

    job: int
    config: MatchConfig
    games: tuple[int, ...]
    folder: Path
    gated: bool
    """Each game but the first waits for the head's :class:`Go`."""


class Stop(NamedTuple):
    """Job ``job`` plays no further game once the current one is over."""

    job: int


class Go(NamedTuple):
    """A gated job's next game may start; with ``stop``, it stops instead."""

    job: int
    stop: bool


class Follow(NamedTuple):
    """Send table ``table``'s history, then each of its events as it happens."""

    table: str


class Create(NamedTuple):
    """Create a match from a serialised ``CreateMatchRequest``, for the organiser."""

    job: int
    request: bytes


class GetStatus(NamedTuple):
    """Where the organiser's match ``match_id`` is."""

    job: int
    match_id: str


class Lent(NamedTuple):
    """The head's answer to :class:`WantLogs` ``ask``: ``lent`` bytes of logs (0: none left)."""

    ask: int
    lent: int


class Quit(NamedTuple):
    """Stop every match and end."""


ToShard = Init | Play | Stop | Go | Follow | Create | GetStatus | Lent | Quit
"""What the head sends a shard."""
JobOrder = Play | Stop | Go | Create | GetStatus
"""What the head asks of a shard about one of its jobs."""

# -- from a shard to the head, batched per turn of its loop -------------------------------


class Ready(NamedTuple):
    """The shard's referee listens on ``address`` (host:port)."""

    address: str


class TableOpened(NamedTuple):
    """A table of the shard opened: the head mirrors its feed."""

    table: str
    match_id: str
    entries: list[str]


class GameOf(NamedTuple):
    """Table ``table`` plays game ``game`` now."""

    table: str
    game: int


class History(NamedTuple):
    """A followed table's public events so far, each serialised."""

    table: str
    events: list[bytes]


class TableEvent(NamedTuple):
    """A public event of a followed table, serialised."""

    table: str
    event: bytes


class TableClosed(NamedTuple):
    """Table ``table`` is over."""

    table: str


class DealRecorded(NamedTuple):
    """A deal of job ``job`` ended."""

    job: int
    report: DealReport


class GameRecorded(NamedTuple):
    """A game of job ``job`` ended."""

    job: int
    report: GameReport


class Done(NamedTuple):
    """Job ``job`` played all it was asked to."""

    job: int


class Failed(NamedTuple):
    """Job ``job``'s match raised ``error``; the head raises it where a local match would."""

    job: int
    error: Exception


class Created(NamedTuple):
    """The organiser's answer to :class:`Create`: a serialised ``CreateMatchResponse``, or
    None and what is wrong with the request."""

    job: int
    response: bytes | None
    error: str


class Status(NamedTuple):
    """The answer to :class:`GetStatus`: a serialised ``GetMatchResponse``, or None for a
    match the organiser never made."""

    job: int
    response: bytes | None


class WantLogs(NamedTuple):
    """The shard's bots' logs need ``wanted`` more bytes; the head answers with :class:`Lent`."""

    ask: int
    wanted: int


JobReport = DealRecorded | GameRecorded | Done | Failed | Created | Status
"""What a shard says about one of the head's jobs."""
FromShard = Ready | TableOpened | GameOf | History | TableEvent | TableClosed | WantLogs | JobReport
"""What a shard sends the head."""


class Batch(NamedTuple):
    """Everything a shard said in one turn of its loop, in order: one write for them all."""

    messages: list[FromShard]


Message = ToShard | Batch
"""Whatever goes on the socketpair."""


async def read_message(reader: asyncio.StreamReader) -> Message:
    """The next message; IncompleteReadError once the other side is gone."""
    (size,) = HEADER.unpack(await reader.readexactly(HEADER.size))
    message: Message = pickle.loads(await reader.readexactly(size))
    return message


def frame(message: Message) -> bytes:
    """``message`` as it goes on the wire."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data
