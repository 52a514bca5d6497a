"""The front of ``tavolo serve --shards N``: one address for matches run by N shards.

The front is a referee whose tables are all mirrors (:class:`referee.shard_pool.ShardPool`
feeds its spectators). :class:`ShardedMatches` is its MatchService: each match is made
on the least loaded shard, and the front remembers which shard holds each match and each
ticket, so that GetMatch asks the right shard and a bot that connects to the front is
relayed to it (:class:`referee.service.relay.Relay`).
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from grpc_health.v1 import health_pb2

from referee.service.feeds import TableFeed
from referee.service.server import Referee
from referee.shard_pool import ShardLost, ShardPool
from tavolo_bot.proto import referee_pb2 as pb

REFEREE_SERVICE = pb.DESCRIPTOR.services_by_name["RefereeService"].full_name
WATCH_EVERY = 0.1
"""Seconds between two looks at a lost shard, to report SERVING once it is back."""


@dataclass(frozen=True)
class _Placed:
    shard: int
    deaths: int
    """How many times the shard had died when the match or ticket was made there."""


class ShardedMatches:
    """MatchService over a pool of shards, and the routes of their tickets."""

    hears_events = False
    """As a listener of the head it needs tables closing only, not their every event."""

    def __init__(self, head: Referee, pool: ShardPool, admin_token: str) -> None:
        self.admin_token = admin_token
        self._head = head
        self._pool = pool
        self._matches: dict[str, _Placed] = {}
        self._tickets: dict[str, _Placed] = {}
        self._deaths: dict[int, list[str]] = {}
        """Per shard: why it died, each time."""
        self._final: dict[str, pb.GetMatchResponse] = {}
        """Matches known to be over: their shard may die later without losing them."""
        self._tasks: set[asyncio.Task[None]] = set()
        head.listen(self)

    async def create(self, request: pb.CreateMatchRequest) -> pb.CreateMatchResponse:
        """Make the match on the least loaded shard; ValueError as the shard's organiser
        raises it."""
        shard, response = await self._pool.create_match(request)
        placed = _Placed(shard, len(self._deaths.get(shard, ())))
        self._matches[response.match_id] = placed
        for ticket in response.tickets:
            self._tickets[ticket.ticket] = placed
        return response

    async def status(self, match_id: str) -> pb.GetMatchResponse | None:
        """Where match ``match_id`` is, asked of its shard; ``failed`` naming the shard if
        the shard died since it was made."""
        final = self._final.get(match_id)
        if final is not None:
            return final
        placed = self._matches.get(match_id)
        if placed is None:
            return None
        lost = self._lost(placed)
        if lost is not None:
            return pb.GetMatchResponse(match_id=match_id, status="failed", error=lost)
        try:
            status = await self._pool.match_status(placed.shard, match_id)
        except ShardLost:
            return await self.status(match_id)
        if status is not None and status.status in ("done", "failed"):
            self._final[match_id] = status
        return status

    def route(self, ticket: str) -> str | None:
        """The address of the shard that holds ``ticket``; None if no live shard does."""
        placed = self._tickets.get(ticket)
        if placed is None or self._lost(placed) is not None:
            return None
        return self._pool.addresses[placed.shard] or None

    def _lost(self, placed: _Placed) -> str | None:
        """Why what was made on ``placed.shard`` is lost; None if the shard lives on."""
        deaths = self._deaths.get(placed.shard, [])
        if len(deaths) <= placed.deaths:
            return None
        return f"ShardLost: {deaths[placed.deaths]}; the matches it was running are lost"

    def shard_died(self, shard: int, why: str) -> None:
        """The pool's ``on_shard_died``: its matches are lost, and the referee service is
        NOT_SERVING until every shard serves again."""
        self._deaths.setdefault(shard, []).append(why)
        self._start(self._watch_health())

    async def _watch_health(self) -> None:
        health = self._head.health
        await health.set(REFEREE_SERVICE, health_pb2.HealthCheckResponse.NOT_SERVING)
        while not all(self._pool.alive(i) for i in range(len(self._pool))):
            await asyncio.sleep(WATCH_EVERY)
        await health.set(REFEREE_SERVICE, health_pb2.HealthCheckResponse.SERVING)

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- a FeedListener of the head: keep each match's end before its shard can die ----

    def table(self, feed: TableFeed) -> None:
        """A new table: nothing to keep yet."""

    def event(self, feed: TableFeed, event: pb.Event) -> None:
        """An event: nothing to keep."""

    def closed(self, feed: TableFeed) -> None:
        """A table is over: ask its shard for the match's end and keep it here."""
        if feed.match_id in self._matches and feed.match_id not in self._final:
            self._start(self._keep_final(feed.match_id))

    async def _keep_final(self, match_id: str) -> None:
        # The organiser sets the status just after the table closes: ask until it has.
        for _ in range(50):
            status = await self.status(match_id)
            if status is None or status.status in ("done", "failed"):
                return
            await asyncio.sleep(WATCH_EVERY)
