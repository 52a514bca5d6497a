"""Remote bots: submissions whose bot runs on its entrant's own machine and connects to the
arena's referee with its submission's key (``TAVOLO_KEY``), as a tournament's remote
entrants do (:mod:`referee.entrant_keys`).

The referee is long-lived, on its own address (``arena serve --referee-listen``), over TLS
when the site is. Its tables are watched by nobody: a remote bot that could watch would see
a duplicate set's deals before it plays them. A key opens only its own submission's seats,
and nothing once the submission failed or was disabled.
"""

from __future__ import annotations

import secrets

from referee.entrant_keys import EntrantKeys
from referee.service.server import Referee, start_referee
from tournaments.arena.config import ArenaConfig
from tournaments.arena.store import ArenaStore, State, Submission


class RemoteBots:
    """The arena's referee for remote bots, and who of them is connected."""

    def __init__(
        self, referee: Referee, keys: EntrantKeys, store: ArenaStore, *, tls: bool
    ) -> None:
        self.referee, self.keys, self.store = referee, keys, store
        self.tls = tls
        """Whether it serves TLS (the bots need ``TAVOLO_TLS_CA``)."""

    @classmethod
    async def start(
        cls,
        store: ArenaStore,
        config: ArenaConfig,
        listen: str,
        *,
        tls: tuple[bytes, bytes] | None = None,
    ) -> RemoteBots:
        """Start the referee on ``listen`` (``host:port``); OSError if it cannot listen."""
        # A token nobody is told: no spectator, remote bot or not, watches a table here.
        referee = await start_referee(listen, tls=tls, spectator_token=secrets.token_urlsafe(32))
        streams = 2 if config.rules.partnerships else 1
        holder: list[RemoteBots] = []
        keys = EntrantKeys(lambda d: holder[0].owner(d), streams_per_table=streams)
        referee.book.keys = keys
        bots = cls(referee, keys, store, tls=tls is not None)
        holder.append(bots)
        return bots

    @property
    def port(self) -> int:
        """The port bots connect to."""
        return int(self.referee.address.rpartition(":")[2])

    @property
    def streams_per_table(self) -> int:
        """Streams a table takes of one bot: 2 in a partnership game, else 1."""
        return self.keys.streams_per_table

    def owner(self, digest: str) -> tuple[str, bool] | None:
        """A key's digest -> (its submission's label, revoked); None for no key."""
        found = self.store.remote_owner(digest)
        if found is None:
            return None
        submission, revoked = found
        self.know(submission)
        return submission.label, revoked

    def ready(self, submission: Submission) -> bool:
        """Whether ``submission``'s bot has streams enough waiting for a table."""
        label = submission.label
        return self.keys.knows(label) and self.keys.idle(label) >= self.streams_per_table

    def streams(self, submission: Submission) -> int:
        """Streams ``submission``'s bot has open and waiting for a table now."""
        label = submission.label
        return self.keys.idle(label) if self.keys.knows(label) else 0

    def know(self, submission: Submission) -> None:
        """Expect ``submission``'s bot (its key was just made, or it connects)."""
        if not self.keys.knows(submission.label):
            # Matches left: never known, for a ladder that goes on until it is stopped.
            self.keys.add(submission.label, None)

    def forget_ended(self) -> None:
        """End the waiting streams of submissions that will never play again."""
        for submission in self.store.remote_submissions(State.FAILED, State.DISABLED):
            if self.keys.knows(submission.label):
                self.keys.set_matches_left(submission.label, 0)

    async def stop(self) -> None:
        """End every stream (waiting ones with status OK) and stop the referee."""
        self.keys.close()
        await self.referee.stop()
