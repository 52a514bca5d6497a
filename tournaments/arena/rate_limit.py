"""How much one client may ask of the arena's API: a token bucket per client.

A client is its token when it gives one, else its address. Each may make
``per_minute`` requests a minute on average, and a burst of up to that many at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

MAX_CLIENTS = 100_000
"""Buckets kept before the fullest (the idle) are forgotten: a flood of addresses cannot
grow the table without bound."""


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    """Token buckets, one per client."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._rate = per_minute / 60.0
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def take(self, client: str) -> float:
        """Take one request for ``client``: 0 if allowed, else the seconds until it is."""
        now = self._clock()
        bucket = self._buckets.get(client)
        if bucket is None:
            if len(self._buckets) >= MAX_CLIENTS:
                self._forget_idle(now)
            bucket = self._buckets[client] = _Bucket(float(self.per_minute), now)
        bucket.tokens = min(float(self.per_minute), bucket.tokens + (now - bucket.at) * self._rate)
        bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self._rate

    def _forget_idle(self, now: float) -> None:
        full = [
            c for c, b in self._buckets.items()
            if b.tokens + (now - b.at) * self._rate >= self.per_minute
        ]  # fmt: skip
        for client in full or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[client]
