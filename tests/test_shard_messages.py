"""The head's and its shards' messages survive their wire: framed, pickled, read back."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from referee import shard_messages as msg
from referee.engine.registry import preset
from referee.entries import parse_entry
from referee.match.config import MatchConfig
from referee.shard_messages import frame, read_message
from referee.shard_pool import ShardSpec

CONFIG = MatchConfig(preset("tressette"), "wire", (parse_entry("random"), parse_entry("random")))

MESSAGES: list[msg.Message] = [
    msg.Init(ShardSpec(), None, 64, True),
    msg.Play(1, CONFIG, (1, 2), Path("/tmp/x"), False),
    msg.Stop(1),
    msg.Go(1, True),
    msg.Follow("t"),
    msg.Create(2, b"\x01"),
    msg.GetStatus(3, "m"),
    msg.Lent(1, 0),
    msg.Quit(),
    msg.Batch(
        [
            msg.Ready("127.0.0.1:1"),
            msg.TableOpened("t", "m", ["a", "b"]),
            msg.GameOf("t", 2),
            msg.History("t", [b"e"]),
            msg.TableEvent("t", b"e"),
            msg.TableClosed("t"),
            msg.Done(1),
            msg.Created(2, None, "bad"),
            msg.Status(3, b"s"),
            msg.WantLogs(1, 10),
        ]
    ),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_a_message_reads_back_as_it_was_framed(message: msg.Message) -> None:
    async def round_trip() -> msg.Message:
        reader = asyncio.StreamReader()
        reader.feed_data(frame(message))
        reader.feed_eof()
        return await read_message(reader)

    back = asyncio.run(round_trip())
    assert type(back) is type(message)
    assert back == message
