"""What the arena does with each submission it received, one at a time: build it (if its
manifest names a ``build``), validate it, and mark it ``ready`` or ``failed`` with the
reason; each step's log is kept for its entrant. A remote submission is validated once its
bot has connected with its key.

A submission the arena was building or validating when it stopped is taken again from the
start when it resumes (:meth:`~tournaments.arena.store.ArenaStore.requeue_unfinished`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path

from referee.sandbox.probe import sandbox_problem
from tournaments.arena.builds import BuildError, build, build_command
from tournaments.arena.config import ArenaConfig
from tournaments.arena.remote_bots import RemoteBots
from tournaments.arena.store import MANIFEST, ArenaStore, State, Submission, now_utc
from tournaments.arena.validation import validate, validate_remote

IDLE_SECONDS = 1.0
"""How often an idle worker looks for new submissions."""


class SubmissionWorker:
    """Builds and validates received submissions, in the order they came."""

    def __init__(
        self,
        store: ArenaStore,
        config: ArenaConfig,
        *,
        remote: RemoteBots | None = None,
        on_done: Callable[[Submission], None] | None = None,
    ) -> None:
        """``remote``: the referee remote bots connect to; without it remote submissions
        wait (an arena served without ``--referee-listen``)."""
        self.store, self.config = store, config
        self.remote = remote
        self.on_done = on_done

    async def run(self) -> None:
        """Work until cancelled."""
        self.store.requeue_unfinished()
        while True:
            if not await self.work_once():
                await asyncio.sleep(IDLE_SECONDS)

    async def work_once(self) -> bool:
        """Build and validate the oldest received submission that can be (a remote one once
        its bot is connected); False if there was none. A remote one whose bot did not
        connect in ``[remote] connect_hours`` fails."""
        submission = self._next()
        if submission is None:
            return False
        if submission.remote:
            state, reason = await self._check_remote(submission)
        else:
            state, reason = await self._process(submission)
        self.store.set_state(submission.id, state, reason)
        if self.on_done is not None:
            self.on_done(self.store.submission(submission.id))
        return True

    def _next(self) -> Submission | None:
        for submission in self.store.received():
            if not submission.remote:
                return submission
            if self.remote is not None and self.remote.ready(submission):
                return submission
            waited = now_utc() - dt.datetime.fromisoformat(submission.created)
            hours = self.config.remote.connect_hours
            if waited > dt.timedelta(hours=hours):
                reason = f"no bot connected with its key within {hours:g} hours"
                self.store.write_log(submission.id, "validation", reason)
                self.store.set_state(submission.id, State.FAILED, reason)
        return None

    async def _check_remote(self, submission: Submission) -> tuple[State, str]:
        assert self.remote is not None
        self.store.set_state(submission.id, State.VALIDATING)
        checked = await validate_remote(
            submission.label,
            self.config,
            # Never a seed anyone could know: a remote bot could deal the cards itself.
            f"validation-{secrets.token_hex(8)}",
            self.remote.referee,
            self.remote.keys,
        )
        self.store.write_log(submission.id, "validation", checked.log)
        return (State.READY, "") if checked.ok else (State.FAILED, checked.reason)

    async def _process(self, submission: Submission) -> tuple[State, str]:
        store = self.store
        problem = sandbox_problem()
        if problem is not None:
            # Never run a stranger's code unconfined: it waits for a host that can confine it.
            return State.FAILED, f"the arena cannot confine bots here: {problem}"
        source = store.files_of(submission)
        try:
            command = build_command(source / MANIFEST)
        except BuildError as exc:
            store.write_log(submission.id, "build", str(exc))
            return State.FAILED, str(exc)
        folder = source
        if command is not None:
            store.set_state(submission.id, State.BUILDING)
            target = store.built_of(submission)
            if not target.exists():
                with tempfile.TemporaryDirectory(dir=store.builds, prefix=".building-") as tmp:
                    built = await build(
                        source, command, Path(tmp) / "out", self.config.build,
                        toolchains=self.config.toolchains,
                    )  # fmt: skip
                    store.write_log(submission.id, "build", built.log)
                    if not built.ok:
                        return State.FAILED, built.reason
                    store.keep(Path(tmp) / "out", target)
            folder = target
        store.set_state(submission.id, State.VALIDATING)
        checked = await validate(folder, self.config, f"validation-{submission.digest[:16]}")
        store.write_log(submission.id, "validation", checked.log)
        if not checked.ok:
            return State.FAILED, checked.reason
        return State.READY, ""
