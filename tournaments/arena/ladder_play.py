"""The ladder at work: meetings chosen one after another (:func:`~.ladder.choose_pair`),
up to ``parallel`` at once (each submission in one at a time), each a duplicate set played
in the sandbox through the tournament machinery, and kept whole, or not at all. A meeting
a stopped arena was playing is played again from its seed when it resumes, and only then
are new ones chosen; one with a remote bot, once that bot has connected again.

A remote submission is paired only while its bot is connected and waiting, and its
meetings are played here, on the arena's referee for remote bots, never on a cluster.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path

from referee.entries import Entry, EntryError, load_manifest, parse_entry
from referee.match.config import MatchConfig
from referee.sandbox.bwrap import SandboxMode
from tournaments.arena.config import ArenaConfig
from tournaments.arena.ladder import Meeting, choose_pair, games_and_meetings
from tournaments.arena.ladder_cluster import MeetingCluster
from tournaments.arena.remote_bots import RemoteBots
from tournaments.arena.store import ArenaStore, State, Submission, now_utc
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
        remote: RemoteBots | None = None,
        on_meeting: Callable[[Meeting], None] | None = None,
    ) -> None:
        """``parallel``: meetings at once, here; with a ``cluster`` (entered), they are
        played there instead, as many at once as its workers have threads. ``remote``:
        the referee remote bots connect to (without it, remote submissions wait)."""
        if parallel < 1:
            raise ValueError("a ladder plays 1 meeting at a time or more")
        self.store, self.config = store, config
        self.parallel = parallel
        self.cluster = cluster
        self.remote = remote
        self.on_meeting = on_meeting
        self._playing: set[int] = set()
        """Submissions in a meeting now: each plays one at a time."""
        self._waiting: list[Meeting] = []
        """Meetings a stopped arena left with a remote bot: played again once it is back."""

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
                if self.remote is not None:
                    self.remote.forget_ended()
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
        """Play again, from their seeds, the meetings a stopped arena left, but those with
        a remote bot (played once it is back: :meth:`start_next`); how many."""
        unfinished = self.store.ladder.unfinished()
        for meeting in unfinished:
            if any(self.store.submission(n).remote for n in (meeting.a, meeting.b)):
                self._waiting.append(meeting)
            else:
                await self.play(meeting)
        return len(unfinished) - len(self._waiting)

    async def play_next(self) -> Meeting | None:
        """Choose and play one meeting; None if fewer than two submissions are free."""
        meeting = self.start_next()
        return None if meeting is None else await self._play_started(meeting)

    def start_next(self) -> Meeting | None:
        """A meeting a stop left whose remote bots are back, else the next meeting chosen
        among the active submissions not playing now (a remote one only while its bot
        waits for a table), recorded as started; None if fewer than two are free."""
        store = self.store
        for meeting in self._waiting:
            sides = (meeting.a, meeting.b)
            ready = all(self._can_play(store.submission(n)) for n in sides)
            if not self._playing.intersection(sides) and ready:
                self._waiting.remove(meeting)
                self._playing.update(sides)
                return meeting
        active = [
            s.id
            for s in store.refresh_active(self.config.submissions.active)
            if s.id not in self._playing and self._can_play(s)
        ]
        results, elo = store.ladder.point_fit()
        games, met = games_and_meetings(results)
        pair = choose_pair(active, games, met, elo, store.ladder.meetings_done() + 1)
        if pair is None:
            return None
        self._playing.update(pair)
        return store.ladder.start(*pair, secrets.token_hex(8), now_utc().isoformat())

    def _can_play(self, submission: Submission) -> bool:
        """Whether ``submission`` can be seated now: a remote one's bot must wait."""
        if not submission.remote:
            return True
        return self.remote is not None and self.remote.ready(submission)

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
            if submission.remote:
                entries.append(dataclasses.replace(parse_entry("remote"), name=submission.label))
                continue
            try:
                entry = load_manifest(store.play_folder(submission) / "bot.toml")
            except EntryError as exc:
                store.set_state(number, State.FAILED, f"cannot be played: {exc}")
                store.ladder.drop(meeting)
                return
            # Its entrant's name and the submission's number, whatever the manifest says.
            entries.append(dataclasses.replace(entry, name=submission.label, sandbox=None))
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
        remote = self.remote if any(e.remote for e in entries) else None
        if self.cluster is not None and remote is None:
            reports, folder = await self.cluster.play(meeting, match)
            await asyncio.to_thread(store.ladder.finish, meeting, reports)
            self._keep_stderr(meeting, folder)
            self.cluster.clean(folder)
        else:
            reports = []
            with tempfile.TemporaryDirectory(prefix="tavolo-arena-") as scratch:
                await play_matches(
                    [match],
                    Path(scratch),
                    on_game=lambda _, report: reports.append(report),
                    referee=remote.referee if remote is not None else None,
                    keys=remote.keys if remote is not None else None,
                )
                await asyncio.to_thread(store.ladder.finish, meeting, reports)
                self._keep_stderr(meeting, Path(scratch))
        if self.on_meeting is not None:
            self.on_meeting(meeting)

    def _keep_stderr(self, meeting: Meeting, folder: Path) -> None:
        """Keep each side's bots' stderr of ``meeting``, played in ``folder``; on a worker
        of another machine, say where it is instead."""
        for index, number in enumerate((meeting.a, meeting.b)):
            if self.store.submission(number).remote:
                text = "(a remote bot: its stderr stays on its entrant's machine)"
            elif folder.is_dir():
                text = _stderr_of(folder, index)
            else:
                text = f"(on the worker that played it, in {folder})"
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
