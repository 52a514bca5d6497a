"""Bot streams: the Hello, its ticket or entrant key, and a socket of one slot's own.

The servicer is thin: it checks tickets and hands each stream to its slot. No rule is
decided here; tables ask the engine.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc

from referee.match.slots import Slot, SlotError, TicketBook, parse_request
from referee.protocol import PROTOCOL_VERSION
from referee.sandbox.bot_process import finish_despite_cancel
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc

MAX_MESSAGE_BYTES = 64 * 1024
"""Largest message a bot may send; a Decision is a few bytes."""
HELLO_TIMEOUT = 10.0
HELLO_LESS_STREAMS = 32
"""Streams of one connection that may wait for their Hello at once; a further one is
refused at once. Streams that said Hello do not count: a relay or a client multiplexing
many bots on one connection is never held back."""
SLOT_CONNECTIONS = 1
"""Connections a slot's own socket holds at once; gRPC core closes any further one."""
SLOT_STREAMS = 2
"""Streams at once on a slot's connection: its stream, and one taking over from it."""


async def read_hello(
    context: grpc.aio.ServicerContext[Any, Any], waiting: Counter[str]
) -> tuple[bytes, pb.Hello]:
    """A Play stream's first message, as sent and parsed; the stream is aborted with the
    reason if it is not a Hello of this protocol version, or if its connection (its peer
    in ``waiting``) already has :data:`HELLO_LESS_STREAMS` streams waiting for theirs."""
    peer = context.peer()
    if waiting[peer] >= HELLO_LESS_STREAMS:
        # Thousands of Hello-less streams on one connection cost the referee hundreds of
        # megabytes and its honest bots their deadlines (issue 26).
        await context.abort(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"too_many_streams: {HELLO_LESS_STREAMS} streams of this connection are "
            "waiting for their Hello already",
        )
    waiting[peer] += 1
    try:
        raw = await asyncio.wait_for(context.read(), HELLO_TIMEOUT)
    except TimeoutError:
        await context.abort(
            grpc.StatusCode.DEADLINE_EXCEEDED, f"no_hello: no Hello within {HELLO_TIMEOUT:g} s"
        )
    finally:
        waiting[peer] -= 1
        if not waiting[peer]:
            del waiting[peer]
    try:
        first = None if raw is grpc.aio.EOF else parse_request(raw)
    except SlotError as exc:
        await context.abort(exc.code, f"{exc.reason}: {exc.message}")
    if first is None or not first.HasField("hello"):
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT, "no_hello: the first message must be a Hello"
        )
    hello = first.hello
    if hello.protocol_version != PROTOCOL_VERSION:
        await context.abort(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"protocol_version: this referee speaks version {PROTOCOL_VERSION}, "
            f"the bot version {hello.protocol_version}",
        )
    return raw, hello


class RefereeServicer(pb_grpc.RefereeServiceServicer):
    """Bot streams: check the Hello and its ticket, then hand the stream to its slot."""

    def __init__(self, book: TicketBook, only: Slot | None = None) -> None:
        self._book = book
        self._only = only
        """The slot whose own socket this serves; None for the TCP listener."""
        self._waiting: Counter[str] = Counter()
        """Streams waiting for their Hello, by connection."""

    async def Play(
        self,
        request_iterator: AsyncIterator[bytes],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        _, hello = await read_hello(context, self._waiting)
        try:
            if hello.key:
                await self._serve_key(hello, context)
                return
            link = self._book.claim(hello.ticket, self._only)
            await link.attach(context, compact=hello.compact_observations)
            await link.serve(context)
        except SlotError as exc:
            await context.abort(exc.code, f"{exc.reason}: {exc.message}")

    async def _serve_key(self, hello: pb.Hello, context: Any) -> None:
        """A stream opened with an entrant key: seated in the entrant's matches in turn."""
        if hello.ticket:
            raise SlotError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "ticket_and_key",
                "a Hello carries a ticket or an entrant key, not both",
            )
        keys = self._book.keys
        if self._only is not None or keys is None:
            raise SlotError(
                grpc.StatusCode.FAILED_PRECONDITION,
                "no_keys",
                "entrant keys work only on the listener of a tournament run; "
                "this stream needs a ticket",
            )
        await keys.serve(hello.key, context, compact=hello.compact_observations)


def _response_bytes(response: pb.PlayResponse | bytes) -> bytes:
    # Requests come encoded already (Slot.send_request); everything else is a message.
    return response if isinstance(response, bytes) else response.SerializeToString()


def play_handler(
    book: TicketBook, only: Slot | None
) -> grpc.RpcMethodHandler[bytes, pb.PlayResponse | bytes]:
    # Play takes raw bytes, so a malformed message is refused with a reason, not a crash.
    handler: grpc.RpcMethodHandler[bytes, pb.PlayResponse | bytes] = (
        grpc.stream_stream_rpc_method_handler(
            RefereeServicer(book, only).Play, response_serializer=_response_bytes
        )
    )
    return handler


async def open_slot_socket(book: TicketBook, link: Slot, path: Path) -> grpc.aio.Server:
    """Serve ``RefereeService`` on the Unix socket ``path`` for ``link``'s ticket alone.

    Each bot process the referee starts gets a socket of its own (bound into its sandbox),
    so a ticket read elsewhere opens nothing on it.
    """
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            # One bot, one connection, one stream (and one more while it reconnects): a bot
            # opening thousands holds no descriptor and no memory of the referee's.
            ("grpc.max_allowed_incoming_connections", SLOT_CONNECTIONS),
            ("grpc.max_concurrent_streams", SLOT_STREAMS),
        ]
    )
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "tavolo.v1.RefereeService", {"Play": play_handler(book, link)}
            ),
        )
    )
    if server.add_insecure_port(f"unix:{path}") == 0:
        raise OSError(f"cannot listen on unix:{path}")
    try:
        await server.start()
    except BaseException:
        # Cancelled (Ctrl-C) or failed: the caller never gets it, so it is stopped here.
        await finish_despite_cancel(server.stop(0))
        raise
    link.socket = str(path)
    return server
