"""The ladder's meetings on a Dask cluster (``tavolo arena serve --cluster``).

Each meeting, one duplicate set, is a task that a worker plays at a referee of its own
with the bots in its sandbox (:func:`tournaments.cluster_task.play_set`), as a
tournament's sets are on a cluster (docs/cluster.md). The workers must see the arena's
submission and build folders at the paths the head sees (``local:N`` on this machine, or a
shared filesystem elsewhere): before it plays, a task checks every file the two bots run
against the head's digests, and this tavolo against the head's.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.entries import program_hashes
from referee.match.config import MatchConfig
from referee.match.results import GameReport
from referee.sandbox.bwrap import SandboxMode
from tournaments.arena.ladder import Meeting
from tournaments.cluster import ClusterConnection, OnCluster
from tournaments.cluster_task import (
    BotCheck,
    ClusterError,
    SetOutcome,
    code_digest,
    forget_match,
    play_set,
)

LOGS_MB = 512
"""What the bots' logs of the meetings in play may take on a worker, together."""


class MeetingCluster(OnCluster):
    """Meetings played on a Dask cluster; an async context manager (entering connects, or
    starts the LocalCluster, and checks the workers' tavolo; each meeting checks its bots)."""

    def __init__(
        self, cluster: str, folder: Path, *, on_warning: Callable[[str], None] | None = None
    ) -> None:
        """``cluster`` as ``--cluster`` takes it; ``folder``: where the meetings' logs go,
        on every worker (the arena's ``<db>.ladder``)."""
        self.connection = ClusterConnection(cluster, on_warning=on_warning)
        self.folder = folder
        self.code = code_digest()
        self._tries: dict[int, int] = {}
        # What a stopped arena's meetings left here: they are played again from the start.
        for stale in sorted(folder.glob("meeting-*")):
            shutil.rmtree(stale)

    async def threads(self) -> int:
        """Meetings the workers play at once: their threads, together (at least 1)."""
        return max(1, sum((await self.connection.workers()).values()))

    async def play(self, meeting: Meeting, config: MatchConfig) -> tuple[list[GameReport], Path]:
        """Play ``meeting`` (``config``, one duplicate set) on a worker; its games, and the
        folder of its bots' logs (on that worker's machine)."""
        from distributed import KilledWorker

        client: Any = self.connection.client
        assert client is not None
        checks = tuple(
            BotCheck(e.name, e, tuple(program_hashes(e).items()), SandboxMode.BWRAP)
            for e in config.entries
        )
        tries = self._tries[meeting.id] = self._tries.get(meeting.id, 0) + 1
        folder = self.folder / f"meeting-{meeting.id:06d}"
        future = client.submit(
            play_set, config, tuple(range(1, config.games + 1)), checks, self.code,
            str(folder / "set-1"), (str(self.folder), LOGS_MB),
            key=f"tavolo-arena-meeting-{meeting.id}-{meeting.seed}-try-{tries}", pure=False,
        )  # fmt: skip
        try:
            outcome: SetOutcome = await future
        except KilledWorker as exc:
            raise ClusterError(
                f"meeting {meeting.id}: {exc.allowed_failures + 1} workers died playing it, "
                f"the last {exc.last_worker.address}; see their logs"
            ) from None
        finally:
            if not future.done():
                await client.cancel([future])
            future.release()
            # The worker keeps a played match's bots for its next set; a meeting has none.
            await client.run(forget_match, str(folder), on_error="return")
        return list(outcome.games), Path(outcome.folder)

    def clean(self, folder: Path) -> None:
        """Remove a played meeting's folder, if it is on this machine (its logs read)."""
        if folder.is_relative_to(self.folder) and folder.is_dir():
            shutil.rmtree(folder.parent if folder.name.startswith("set-") else folder)
