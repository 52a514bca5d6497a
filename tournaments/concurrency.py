"""How many tables a tournament plays at once, when its file and command line do not say.

A table is latency-bound: while a bot thinks, or a message crosses a socket, the referee
and the other bots wait. So the core count is a poor guess. Slow bots leave cores idle
at one table per core, and fast built-in bots keep a core busy with fewer tables.
:class:`AdaptiveTables` starts at one table per core. It then measures how busy the whole
machine was over the last window (``/proc/stat``) and adds a table while cores sit idle
and work is waiting. It takes one away when the machine is saturated.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PROC_STAT = Path("/proc/stat")
WINDOW_SECONDS = 2.0
"""How long the machine is watched between two changes of the table count."""
IDLE_BELOW = 0.85
"""Busy under this share of the machine, with work waiting: one more table."""
SATURATED_ABOVE = 0.97
"""Busy over this share: one table fewer (down to one per core)."""
MOST_PER_CORE = 8
"""The most tables per core, however idle the machine: bots that sleep are not work."""


def machine_times(path: Path = PROC_STAT) -> tuple[float, float]:
    """(busy, total) CPU seconds of every core since boot, from ``/proc/stat``'s first line.

    OSError where there is no such file (not Linux): the caller then keeps its count.
    """
    fields = path.read_text(encoding="ascii").split("\n", 1)[0].split()
    if not fields or fields[0] != "cpu":
        raise OSError(f"{path}: no cpu line")
    ticks = [float(x) for x in fields[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0.0)  # idle + iowait
    total = sum(ticks[:8])  # guest time is already counted in user time
    return total - idle, total


@dataclass
class AdaptiveTables:
    """Tables at once, changed one at a time by how busy the machine was."""

    cores: int
    limit: int = 0
    """Tables at once now (starts at ``cores``)."""
    sample: Callable[[], tuple[float, float]] = machine_times
    clock: Callable[[], float] = time.monotonic
    _last: tuple[float, float, float] | None = None
    measured: bool = True
    """False once the machine could not be read: the count then stays where it is."""

    def __post_init__(self) -> None:
        self.limit = self.limit or self.cores
        self._last = self._read()

    @classmethod
    def for_this_machine(cls) -> AdaptiveTables:
        return cls(os.cpu_count() or 1)

    def _read(self) -> tuple[float, float, float] | None:
        try:
            busy, total = self.sample()
        except (OSError, ValueError, IndexError):
            self.measured = False
            return None
        return self.clock(), busy, total

    def busy_share(self) -> float | None:
        """How busy the machine was since the last call at least a window ago (0 to 1),
        or None before a window has passed."""
        if self._last is None or not self.measured:
            return None
        now = self.clock()
        if now - self._last[0] < WINDOW_SECONDS:
            return None
        start = self._last
        self._last = self._read()
        if self._last is None:
            return None
        spent = self._last[2] - start[2]
        return None if spent <= 0 else (self._last[1] - start[1]) / spent

    def adjust(self, waiting: bool) -> int:
        """The count for now: one more if the machine was idle and work is ``waiting``,
        one fewer if it was saturated, else unchanged."""
        share = self.busy_share()
        if share is None:
            return self.limit
        if share < IDLE_BELOW and waiting:
            self.limit = min(self.limit + 1, self.cores * MOST_PER_CORE)
        elif share > SATURATED_ABOVE and self.limit > self.cores:
            self.limit -= 1
        return self.limit


def split_games(games: int, rotation: int, pieces: int, least_sets: int) -> list[range]:
    """Game numbers 1..``games`` cut into at most ``pieces`` runs of whole duplicate sets
    (``rotation`` games each), none shorter than ``least_sets`` sets but the last."""
    sets = games // rotation
    if pieces <= 1 or sets < 2 * least_sets:
        return [range(1, games + 1)]
    per = max(least_sets, -(-sets // pieces))
    return [
        range(start * rotation + 1, min(start + per, sets) * rotation + 1)
        for start in range(0, sets, per)
    ]
