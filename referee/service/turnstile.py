"""The turnstile: tables send their requests only as fast as the event loop keeps up."""

from __future__ import annotations

import asyncio
from collections import deque


class Turnstile:
    """Lets tables send their requests only as fast as the event loop keeps up.

    A saturated loop runs every ready callback before it looks again at its sockets, so a
    turn lasts as long as the work queued in it. Answers that arrived in time then wait
    past their deadline, and grpc.aio, which takes a new stream only when its one pending
    ``request_call`` completes, seats one stream every two or three turns: 2,000 streams
    need minutes. The turnstile keeps turns short instead. At most ``limit`` requests
    are open at once; while the loop runs late by more than :data:`LAG_LIMIT` the limit
    shrinks, and while it keeps time and tables are waiting it grows, so bots that think
    long (which cost the loop nothing) are never held back.
    """

    TICK = 0.002
    """Seconds between two measures of the loop's lateness, while requests are open."""
    LAG_LIMIT = 0.002
    """How late (seconds) a timer may run before fewer requests are let through."""
    MIN_LIMIT = 16
    """The fewest requests let through at once, however late the loop runs."""

    def __init__(self) -> None:
        self.limit = float(self.MIN_LIMIT * 4)
        self.open = 0
        """Requests let through and not yet over."""
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.lag = 0.0
        """How late the last tick ran, in seconds."""
        self._ticking = False

    async def enter(self) -> None:
        """Wait for the right to send one request; :meth:`leave` once it is over."""
        while self.waiting and self.waiting[0].done():
            self.waiting.popleft()  # cancelled while waiting
        if self.open < self.limit and not self.waiting:
            self.open += 1
        else:
            turn = asyncio.get_running_loop().create_future()
            self.waiting.append(turn)
            try:
                await turn
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled():
                    self.leave()  # let through just as it was cancelled: pass it on
                raise
        self._tick_soon()

    def leave(self) -> None:
        """The request is over (answered, timed out, or its stream gone)."""
        self.open -= 1
        self._admit()

    def _admit(self) -> None:
        while self.waiting and self.open < self.limit:
            turn = self.waiting.popleft()
            if not turn.done():
                self.open += 1
                turn.set_result(None)

    def _tick_soon(self) -> None:
        if not self._ticking:
            self._ticking = True
            loop = asyncio.get_running_loop()
            due = loop.time() + self.TICK
            loop.call_at(due, self._tick, due)

    def _tick(self, due: float) -> None:
        loop = asyncio.get_running_loop()
        self.lag = loop.time() - due
        if self.lag > self.LAG_LIMIT:
            # From what is open, not from the limit: a limit far above it holds nothing.
            self.limit = max(float(self.MIN_LIMIT), min(self.limit, self.open) * 0.9)
        elif self.waiting:
            self.limit += 1
        self._admit()
        self._ticking = False
        if self.open or self.waiting:
            self._tick_soon()
