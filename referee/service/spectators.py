"""Spectators: the list of tables and each table's public events, behind a token if set."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import hmac
from collections.abc import AsyncIterator
from typing import Any

import grpc

from referee.service.feeds import TableFeed
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc

SPECTATOR_TOKEN_KEY = "tavolo-spectator-token"
"""The metadata key of a spectator's token (``tavolo watch --token-file``)."""
SPECTATOR_TOKEN_NEEDED = (
    "spectators need the tournament's spectator token while remote entrants play "
    "(tavolo watch --token-file NAME.spectator): a table shows the deals that its duplicate "
    "set's other game plays again (docs/security.md)"
)


class SpectatorServicer(pb_grpc.SpectatorServiceServicer):
    """Public views of the tables."""

    def __init__(
        self, feeds: dict[str, TableFeed], public_names: bool, token: str | None = None
    ) -> None:
        self._feeds = feeds
        # Anyone may watch, bots included: entry names are shown only when the referee's
        # owner says so, since no bot may learn who it plays.
        self._public_names = public_names
        self._token = token

    async def _refuse_outsiders(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        # Whatever the peer's address: a forwarder on this machine makes anyone loopback.
        if self._token is None:
            return
        given = dict(context.invocation_metadata() or ()).get(SPECTATOR_TOKEN_KEY, "")
        if not isinstance(given, str) or not hmac.compare_digest(given, self._token):
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, SPECTATOR_TOKEN_NEEDED)

    async def Watch(
        self, request: pb.WatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.WatchResponse]:
        await self._refuse_outsiders(context)
        feed = self._feeds.get(request.table_id)
        if feed is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no table {request.table_id!r}")
            return
        if feed.follow is not None:
            await feed.follow()
        queue: asyncio.Queue[pb.Event | None] = asyncio.Queue()
        for event in feed.history:
            queue.put_nowait(event)
        if feed.done:
            queue.put_nowait(None)
        else:
            feed.watchers.append(queue)
        try:
            while (item := await queue.get()) is not None:
                yield pb.WatchResponse(table_id=feed.table_id, event=item)
        finally:
            if queue in feed.watchers:
                feed.watchers.remove(queue)

    async def ListTables(
        self, request: pb.ListTablesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ListTablesResponse:
        await self._refuse_outsiders(context)
        return pb.ListTablesResponse(
            tables=[
                pb.TableInfo(
                    table_id=f.table_id,
                    match_id=f.match_id,
                    game=f.game,
                    entries=f.entries if self._public_names else [],
                )
                for f in self._feeds.values()
                if not f.done
            ]
        )
