"""The relay: Play streams passed on, byte for byte, to the referee that holds their ticket."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc

from referee.service.bot_streams import read_hello


class Relay:
    """Play streams for tickets that another referee holds, passed on to it byte for byte
    (the front of ``tavolo serve --shards``): the bot sees that referee's every message
    and the status it ends the stream with."""

    def __init__(
        self,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self.route: Callable[[str], str | None] = lambda ticket: None
        """host:port of the referee that holds a ticket; None for a ticket none holds."""
        self._credentials = credentials
        self._options = list(options)
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._waiting: Counter[str] = Counter()

    def _channel(self, address: str) -> grpc.aio.Channel:
        channel = self._channels.get(address)
        if channel is None:
            if self._credentials is None:
                channel = grpc.aio.insecure_channel(address, options=self._options)
            else:
                channel = grpc.aio.secure_channel(address, self._credentials, self._options)
            self._channels[address] = channel
        return channel

    async def close(self) -> None:
        """Close the channels to the referees behind."""
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()

    async def Play(
        self, request_iterator: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        raw, hello = await read_hello(context, self._waiting)
        if hello.key:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                "no_keys: entrant keys work only on the listener of a tournament run; "
                "this stream needs a ticket",
            )
        address = self.route(hello.ticket)
        if address is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown_ticket: unknown ticket")
        call: grpc.aio.StreamStreamCall[bytes, bytes] = self._channel(address).stream_stream(
            "/tavolo.v1.RefereeService/Play"
        )()
        upstream = asyncio.ensure_future(self._upstream(raw, context, call))
        try:
            while (message := await call.read()) is not grpc.aio.EOF:
                await context.write(message)
            code, details = await call.code(), await call.details()
        except grpc.aio.AioRpcError as exc:
            code, details = exc.code(), exc.details() or ""
        finally:
            upstream.cancel()
            call.cancel()
        if code is not grpc.StatusCode.OK:
            await context.abort(code, details)

    @staticmethod
    async def _upstream(
        hello: bytes,
        context: grpc.aio.ServicerContext[Any, Any],
        call: grpc.aio.StreamStreamCall[bytes, bytes],
    ) -> None:
        """The bot's messages to the referee behind, its Hello first."""
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            await call.write(hello)
            while (message := await context.read()) is not grpc.aio.EOF:
                await call.write(message)
            await call.done_writing()

    def handler(self) -> grpc.RpcMethodHandler[bytes, bytes]:
        """The Play handler: bytes in, bytes out."""
        handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(
            self.Play
        )
        return handler
