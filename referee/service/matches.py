"""Organisers' calls: matches created from outside, checked against the admin token."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import inspect
import secrets
from collections.abc import Awaitable
from typing import Any, Protocol

import grpc

from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc


class MatchMaker(Protocol):
    """What runs the matches organisers create (``referee.match_maker.LocalMatchMaker``)."""

    admin_token: str
    """Every MatchService call must carry it."""

    async def create(self, request: pb.CreateMatchRequest) -> pb.CreateMatchResponse:
        """Start the match asked for; ValueError names what is wrong with the request."""
        ...

    def status(
        self, match_id: str
    ) -> pb.GetMatchResponse | Awaitable[pb.GetMatchResponse | None] | None:
        """Where match ``match_id`` is; None for an id it never made (awaitable, for a
        maker that has to ask the shard that runs the match)."""
        ...


class MatchServicer(pb_grpc.MatchServiceServicer):
    """Organisers' calls, checked and handed to the :class:`MatchMaker` attached, if any."""

    def __init__(self) -> None:
        self.maker: MatchMaker | None = None
        """Matches can be created only when one is attached (``tavolo serve``)."""

    def attach(self, maker: MatchMaker) -> None:
        """Take matches from outside from now on, run by ``maker``."""
        self.maker = maker

    async def _check(self, token: str, context: grpc.aio.ServicerContext[Any, Any]) -> MatchMaker:
        maker = self.maker
        if maker is None:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "no_admin: this referee takes no matches from outside (run tavolo serve)",
            )
        if not secrets.compare_digest(token.encode(), maker.admin_token.encode()):
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "bad_token: wrong admin token")
        return maker

    async def CreateMatch(
        self, request: pb.CreateMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.CreateMatchResponse:
        maker = await self._check(request.admin_token, context)
        try:
            response = await maker.create(request)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"bad_match: {exc}")
        return response

    async def GetMatch(
        self, request: pb.GetMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetMatchResponse:
        maker = await self._check(request.admin_token, context)
        found = maker.status(request.match_id)
        status = await found if inspect.isawaitable(found) else found
        if status is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        return status
