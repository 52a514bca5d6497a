"""The ladder at work: meetings chosen one after another (:func:`~.ladder.choose_pair`),
up to ``parallel`` at once (each submission in one at a time), each a duplicate set played
in the sandbox through the tournament machinery, and kept whole, or not at all. A meeting
a stopped arena was playing is played again from its seed when it resumes, and only then
are new ones chosen.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path

from referee.entries import Entry, EntryError, load_manifest
from referee.match.config import MatchConfig
from referee.sandbox.bwrap import SandboxMode
from tournaments.arena.config import ArenaConfig
from tournaments.arena.ladder import Meeting, choose_pair, games_and_meetings
from tournaments.arena.ladder_cluster import MeetingCluster
from tournaments.arena.store import ArenaStore, State, now_utc
from tournaments.ladder import match_entries, play_matches

STDERR_BYTES = 32_768
"""What is kept of one submission's bots' stderr in one meeting: the end."""
MEETING_SETS = 1
"""Duplicate sets a meeting plays."""
IDLE_SECONDS = 2.0


class LadderRunner:
    """Plays the ladder's meetings."""

    def __init__(
        self,
        store: ArenaStore,
        config: ArenaConfig,
        *,
        parallel: int = 1,
        cluster: MeetingCluster | None = None,
        on_meeting: Callable[[Meeting], None] | None = None,
    ) -> None:
        """``parallel``: meetings at once, here; with a ``cluster`` (entered), they are
        played there instead, as many at once as its workers have threads."""
        if parallel < 1:
            raise ValueError("a ladder plays 1 meeting at a time or more")
        self.store, self.config = store, config
        self.parallel = parallel
        self.cluster = cluster
        self.on_meeting = on_meeting
        self._playing: set[int] = set()
        """Submissions in a meeting now: each plays one at a time."""

    async def run(self) -> None:
        """Play until cancelled: first what a stop cut short, then new meetings, up to
        ``parallel`` at once."""
        await self.resume()
        running: set[asyncio.Task[Meeting | None]] = set()
        try:
            while True:
                at_once = self.parallel if self.cluster is None else await self.cluster.threads()
                # The fit the pairing needs, made off the event loop (seconds, in a large
                # field): start_next finds it made.
                await asyncio.to_thread(self.store.ladder.point_fit)
                while len(running) < at_once:
                    meeting = self.start_next()
                    if meeting is None:
                        break
                    running.add(asyncio.ensure_future(self._play_started(meeting)))
                if not running:
                    await asyncio.sleep(IDLE_SECONDS)
                    continue
                done, running = await asyncio.wait(
                    running, timeout=IDLE_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
                for task in done:
                    task.result()  # a meeting's failure stops the ladder, loudly
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    async def resume(self) -> int:
        """Play again, from their seeds, the meetings a stopped arena left; how many."""
        unfinished = self.store.ladder.unfinished()
        for meeting in unfinished:
            await self.play(meeting)
        return len(unfinished)

    async def play_next(self) -> Meeting | None:
        """Choose and play one meeting; None if fewer than two submissions are free."""
        meeting = self.start_next()
        return None if meeting is None else await self._play_started(meeting)

    def start_next(self) -> Meeting | None:
        """Choose the next meeting among the active submissions not playing now, and
        record it as started; None if fewer than two are free."""
        store = self.store
        active = [
            s.id
            for s in store.refresh_active(self.config.submissions.active)
            if s.id not in self._playing
        ]
        results, elo = store.ladder.point_fit()
        games, met = games_and_meetings(results)
        pair = choose_pair(active, games, met, elo, store.ladder.meetings_done() + 1)
        if pair is None:
            return None
        self._playing.update(pair)
        return store.ladder.start(*pair, secrets.token_hex(8), now_utc().isoformat())

    async def _play_started(self, meeting: Meeting) -> Meeting:
        try:
            await self.play(meeting)
        finally:
            self._playing.difference_update((meeting.a, meeting.b))
        return meeting

    async def play(self, meeting: Meeting) -> None:
        """Play ``meeting`` and keep its games; a submission that cannot be read is
        failed (and the meeting dropped)."""
        store, config = self.store, self.config
        entries: list[Entry] = []
        for number in (meeting.a, meeting.b):
            submission = store.submission(number)
            try:
                entry = load_manifest(store.play_folder(submission) / "bot.toml")
            except EntryError as exc:
                store.set_state(number, State.FAILED, f"cannot be played: {exc}")
                store.ladder.drop(meeting)
                return
            # Its entrant's name and the submission's number, whatever the manifest says.
            entries.append(
                dataclasses.replace(entry, name=f"{submission.entrant}-{number}", sandbox=None)
            )
        match = MatchConfig(
            config.rules,
            f"arena/{meeting.seed}",
            match_entries(config.rules, entries[0], entries[1]),
            config.deals,
            MEETING_SETS,
            config.limits,
            sandbox=SandboxMode.BWRAP,
            allow_unconfined=False,
        )
        if self.cluster is not None:
            reports, folder = await self.cluster.play(meeting, match)
            await asyncio.to_thread(store.ladder.finish, meeting, reports)
            self._keep_stderr(meeting, folder)
            self.cluster.clean(folder)
        else:
            reports = []
            with tempfile.TemporaryDirectory(prefix="tavolo-arena-") as scratch:
                await play_matches(
                    [match], Path(scratch), on_game=lambda _, report: reports.append(report)
                )
                await asyncio.to_thread(store.ladder.finish, meeting, reports)
                self._keep_stderr(meeting, Path(scratch))
        if self.on_meeting is not None:
            self.on_meeting(meeting)

    def _keep_stderr(self, meeting: Meeting, folder: Path) -> None:
        """Keep each side's bots' stderr of ``meeting``, played in ``folder``; on a worker
        of another machine, say where it is instead."""
        for index, number in enumerate((meeting.a, meeting.b)):
            text = (
                _stderr_of(folder, index)
                if folder.is_dir()
                else f"(on the worker that played it, in {folder})"
            )
            self.store.keep_ladder_stderr(number, meeting.id, text)


def _stderr_of(folder: Path, entry: int) -> str:
    """The stderr of entry ``entry``'s bot processes in a meeting played in ``folder``
    (``<entry>-<slot>[...]/stderr.log`` below it: :class:`referee.match.match.Match`'s
    folders), the end of each, headed by its folder's name."""
    parts = []
    for log in sorted(folder.glob(f"**/{entry}-*/stderr.log")):
        data = log.read_bytes()
        cut = len(data) > STDERR_BYTES
        text = data[-STDERR_BYTES:].decode("utf-8", errors="replace")
        head = f"== {log.parent.name}" + (" (its end)" if cut else "")
        parts.append(f"{head}\n{text}")
    return "\n".join(parts)
