"""The match's clock: each decision's deadline, each slot's time bank, and the tempo."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from referee.match.config import Limits


class Clock:
    """How long each slot may take over a decision, and what its overruns have cost it.

    A decision may take its deadline plus what is left of the slot's time bank; an answer
    later than the deadline pays the overrun out of the bank. The bank is the slot's, shared
    by every process that plays it.
    """

    def __init__(self, limits: Limits, slots: Iterable[int]) -> None:
        self.deadline_ms = limits.deadline_ms
        self.time_bank_ms = limits.time_bank_ms
        self.tempo_ms = limits.tempo_ms
        self._banks = dict.fromkeys(slots, limits.time_bank_ms)
        """Slot -> what is left of its time bank, in ms."""

    def refill(self) -> None:
        """Every slot's time bank full again (a call of ``Match.play`` that keeps its
        processes is a match of its own to the bots' clocks)."""
        self._banks = dict.fromkeys(self._banks, self.time_bank_ms)

    def bank_ms(self, slot: int) -> int:
        """What is left of ``slot``'s time bank."""
        return self._banks[slot]

    def bank_used_ms(self, slot: int) -> int:
        """What ``slot`` has spent of its time bank."""
        return self.time_bank_ms - self._banks[slot]

    def budget(self, slot: int) -> float:
        """Seconds ``slot``'s decision may take now: the deadline and its time bank."""
        return (self.deadline_ms + self._banks[slot]) / 1000

    def left(self, slot: int, started: float) -> float:
        """Seconds left of ``slot``'s budget for a decision asked at ``started``
        (time.monotonic), never below 0."""
        return max(0.0, self.budget(slot) - (time.monotonic() - started))

    def charge(self, slot: int, elapsed: float) -> int:
        """Time ``slot``'s wait of ``elapsed`` seconds; an overrun comes out of its bank.

        Returns the wait in whole milliseconds, rounded down: the think time the record
        gives an answer, and the figure the time bank is charged from.
        """
        ms = int(elapsed * 1000)
        overrun = ms - self.deadline_ms
        if overrun > 0:
            self._banks[slot] = max(0, self._banks[slot] - overrun)
        return ms

    async def keep_tempo(self, started: float) -> None:
        """Hold an action asked for at ``started`` until the tempo lets it be shown."""
        if self.tempo_ms:
            await asyncio.sleep(max(0.0, started + self.tempo_ms / 1000 - time.monotonic()))
