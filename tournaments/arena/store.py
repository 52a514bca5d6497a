"""The arena's store: entrants, invitation codes and submissions in SQLite, and each
submission's files, kept by content, read-only, beside the database.

A submission is addressed by the digest of what it holds (:class:`~.archives.Contents`):
the same folder submitted twice by an entrant is one submission, and two entrants who
submit the same files share them on disk. Nothing is ever changed in place: a submission's
files are written once, under a temporary name, and renamed into place.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import sqlite3
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from referee.entrant_keys import key_digest, new_key
from referee.entries import EntryError, check_name
from tournaments.arena.archives import ArchiveLimits, unpack
from tournaments.arena.database import Database
from tournaments.arena.ladder import LadderStore
from tournaments.arena.sessions import Sessions
from tournaments.arena.tokens import digest, new_token, same_digest, well_formed

LADDER_LOGS = 10
"""Ladder meetings whose bots' stderr is kept for each submission: the last ones."""
MANIFEST = "bot.toml"
"""The bot manifest a submission holds at its top (docs/writing-a-bot.md)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS entrants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_digest TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL,
    disabled INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS arena_facts (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chosen (
    entrant INTEGER PRIMARY KEY REFERENCES entrants(id),
    submission INTEGER NOT NULL REFERENCES submissions(id)
);
CREATE TABLE IF NOT EXISTS invitations (
    digest TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    uses_left INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY,
    entrant INTEGER NOT NULL REFERENCES entrants(id),
    digest TEXT NOT NULL,
    created TEXT NOT NULL,
    state TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    files INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    UNIQUE (entrant, digest)
);
CREATE TABLE IF NOT EXISTS remote_keys (
    submission INTEGER PRIMARY KEY REFERENCES submissions(id),
    key_digest TEXT NOT NULL UNIQUE
);
"""
REMOTE = "remote-"
"""What a remote submission's ``digest`` starts with: it has no files, and its digest is a
random name instead (a content digest is hex)."""


class ArenaError(ValueError):
    """What the arena refuses an entrant or the organiser; the message says why."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status the API answers it with."""


class State(StrEnum):
    """Where a submission is on its way to the ladder."""

    RECEIVED = "received"
    """Unpacked and kept; waiting to be built and validated."""
    BUILDING = "building"
    VALIDATING = "validating"
    READY = "ready"
    """Built and validated: it plays on the ladder."""
    RETIRED = "retired"
    """Superseded by its entrant's newer ones: it keeps its games and rating, and plays no
    more."""
    FAILED = "failed"
    """Its build or validation failed (``reason`` says how): never rated."""
    DISABLED = "disabled"
    """Taken off by the organiser."""


@dataclass(frozen=True)
class Entrant:
    """One entrant of the arena."""

    id: int
    name: str
    created: str
    disabled: bool


@dataclass(frozen=True)
class Submission:
    """One submission: its files are at :meth:`ArenaStore.files_of`."""

    id: int
    entrant: str
    digest: str
    created: str
    state: State
    reason: str
    files: int
    bytes: int

    @property
    def remote(self) -> bool:
        """Whether its bot runs on its entrant's machine and connects with a key."""
        return self.digest.startswith(REMOTE)

    @property
    def label(self) -> str:
        """Its name in matches and records: its entrant's name and its number."""
        return f"{self.entrant}-{self.id}"


def now_utc() -> dt.datetime:
    """The time, in UTC (what every stored time is)."""
    return dt.datetime.now(dt.UTC)


class ArenaStore:
    """The arena's SQLite database, and beside it its submissions' files
    (``<db>.submissions``), their builds (``<db>.builds``) and logs (``<db>.logs``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.files = path.with_name(path.name + ".submissions")
        self.builds = path.with_name(path.name + ".builds")
        self.logs = path.with_name(path.name + ".logs")
        for folder in (self.files, self.builds, self.logs):
            folder.mkdir(mode=0o700, exist_ok=True)
        self._db = Database(path)
        self._db.script(SCHEMA)
        self.ladder = LadderStore(self._db)
        self.sessions = Sessions(self._db)
        os.chmod(path, 0o600)  # it holds digests only, but no one else need read them

    def close(self) -> None:
        self._db.close()

    # -- entrants ----------------------------------------------------------------------

    def invite(self, name: str) -> tuple[Entrant, str]:
        """A new entrant named ``name``, and its token (shown once: only its digest is kept)."""
        try:
            check_name(name, "the entrant's name")
        except EntryError as exc:
            raise ArenaError(str(exc)) from None
        token = new_token()
        created = now_utc().isoformat(timespec="seconds")
        try:
            cursor = self._db.execute(
                "INSERT INTO entrants (name, token_digest, created) VALUES (?, ?, ?)",
                (name, digest(token), created),
            )
        except sqlite3.IntegrityError:
            raise ArenaError(f"an entrant named {name!r} exists already", 409) from None
        assert cursor.lastrowid is not None
        return Entrant(cursor.lastrowid, name, created, False), token

    def new_invitation(self, uses: int) -> str:
        """An invitation code that lets ``uses`` entrants sign up (shown once)."""
        if uses < 1:
            raise ArenaError("an invitation is for 1 entrant or more")
        code = new_token()
        self._db.execute(
            "INSERT INTO invitations VALUES (?, ?, ?)",
            (digest(code), now_utc().isoformat(timespec="seconds"), uses),
        )
        return code

    def sign_up(self, name: str, code: str) -> tuple[Entrant, str]:
        """Sign ``name`` up with the invitation ``code``; its entrant and token."""
        if not well_formed(code):
            raise ArenaError("the invitation code is not valid", 403)
        with self._db.transaction():
            row = self._db.execute(
                "SELECT digest, uses_left FROM invitations WHERE digest = ?", (digest(code),)
            ).fetchone()
            if row is None or not same_digest(code, row[0]) or row[1] < 1:
                raise ArenaError("the invitation code is not valid", 403)
            entrant, token = self.invite(name)
            self._db.execute(
                "UPDATE invitations SET uses_left = uses_left - 1 WHERE digest = ?", (row[0],)
            )
        return entrant, token

    def entrant_of(self, token: str) -> Entrant | None:
        """The entrant whose token this is, or None (a disabled entrant is none)."""
        if not well_formed(token):
            return None
        row = self._db.execute(
            "SELECT id, name, created, disabled, token_digest FROM entrants WHERE token_digest = ?",
            (digest(token),),
        ).fetchone()
        if row is None or not same_digest(token, row[4]) or row[3]:
            return None
        return Entrant(row[0], row[1], row[2], bool(row[3]))

    def entrants(self) -> list[Entrant]:
        rows = self._db.execute("SELECT id, name, created, disabled FROM entrants ORDER BY id")
        return [Entrant(r[0], r[1], r[2], bool(r[3])) for r in rows]

    # -- submissions -------------------------------------------------------------------

    def submit(
        self,
        entrant: Entrant,
        archive: bytes,
        *,
        limits: ArchiveLimits,
        per_day: int,
        at: dt.datetime | None = None,
    ) -> tuple[Submission, bool]:
        """Take ``archive`` from ``entrant``: its submission, and whether it is new (the same
        files again give the submission made before, and count for nothing)."""
        when = at or now_utc()
        day = when.date().isoformat()
        with tempfile.TemporaryDirectory(dir=self.files, prefix=".incoming-") as scratch:
            folder = Path(scratch) / "files"
            contents = unpack(archive, folder, limits)
            if not (folder / MANIFEST).is_file() or (folder / MANIFEST).is_symlink():
                raise ArenaError(
                    f"the archive has no {MANIFEST} at its top: make it from inside the bot's "
                    "folder (docs/arena.md)"
                )
            known = self._submission_where(
                "s.entrant = ? AND s.digest = ?", entrant.id, contents.digest
            )
            if known:
                return known[0], False
            self._check_day(entrant, day, per_day)
            self.keep(folder, self.files / contents.digest)
        cursor = self._db.execute(
            "INSERT INTO submissions (entrant, digest, created, state, files, bytes) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (entrant.id, contents.digest, when.isoformat(timespec="seconds"),
             State.RECEIVED.value, contents.files, contents.total_bytes),
        )  # fmt: skip
        assert cursor.lastrowid is not None
        return self.submission(cursor.lastrowid), True

    def submit_remote(
        self, entrant: Entrant, *, per_day: int, at: dt.datetime | None = None
    ) -> tuple[Submission, str]:
        """A new remote submission of ``entrant``, and its key (shown once: only its digest
        is kept). It counts toward the day's submissions like any other."""
        when = at or now_utc()
        day = when.date().isoformat()
        key = new_key()
        with self._db.transaction():
            self._check_day(entrant, day, per_day)
            cursor = self._db.execute(
                "INSERT INTO submissions (entrant, digest, created, state, files, bytes) "
                "VALUES (?, ?, ?, ?, 0, 0)",
                (entrant.id, REMOTE + secrets.token_hex(16), when.isoformat(timespec="seconds"),
                 State.RECEIVED.value),
            )  # fmt: skip
            assert cursor.lastrowid is not None
            self._db.execute(
                "INSERT INTO remote_keys VALUES (?, ?)", (cursor.lastrowid, key_digest(key))
            )
        return self.submission(cursor.lastrowid), key

    def remote_owner(self, digest_: str) -> tuple[Submission, bool] | None:
        """The remote submission whose key has SHA-256 ``digest_``, and whether the key is
        revoked (the submission failed or was disabled, or its entrant was); None if no
        key has that digest."""
        row = self._db.execute(
            "SELECT r.submission, e.disabled FROM remote_keys r "
            "JOIN submissions s ON s.id = r.submission JOIN entrants e ON e.id = s.entrant "
            "WHERE r.key_digest = ?",
            (digest_,),
        ).fetchone()
        if row is None:
            return None
        submission = self.submission(row[0])
        revoked = bool(row[1]) or submission.state in (State.FAILED, State.DISABLED)
        return submission, revoked

    def remote_submissions(self, *states: State) -> list[Submission]:
        """The remote submissions in one of ``states``, oldest first."""
        marks = ", ".join("?" * len(states))
        return self._submission_where(
            f"s.digest LIKE '{REMOTE}%' AND s.state IN ({marks})", *(s.value for s in states)
        )

    def remote_key_digest(self, number: int) -> str:
        """The digest of remote submission ``number``'s key."""
        row = self._db.execute(
            "SELECT key_digest FROM remote_keys WHERE submission = ?", (number,)
        ).fetchone()
        if row is None:
            raise ArenaError(f"submission {number} is not a remote one", 404)
        return str(row[0])

    def _check_day(self, entrant: Entrant, day: str, per_day: int) -> None:
        today = self._db.execute(
            "SELECT COUNT(*) FROM submissions WHERE entrant = ? AND substr(created, 1, 10) = ?",
            (entrant.id, day),
        ).value()
        if today >= per_day:
            raise ArenaError(
                f"{entrant.name} has made its {per_day} submissions of {day} (UTC); "
                "more are taken tomorrow",
                429,
            )

    def keep(self, folder: Path, final: Path) -> None:
        """Move an unpacked folder to ``final``, read-only, unless it is there already."""
        if final.exists():
            return
        for root, dirs, files in os.walk(folder, followlinks=False):
            for name in files:
                path = Path(root) / name
                if not path.is_symlink():
                    path.chmod(0o555 if os.access(path, os.X_OK) else 0o444)
            for name in dirs:
                if not (Path(root) / name).is_symlink():
                    (Path(root) / name).chmod(0o555)
        folder.chmod(0o555)
        try:
            folder.rename(final)
        except OSError:
            if not final.exists():
                raise
            # Another upload of the same files got there first: theirs is ours, and this
            # copy goes with its temporary folder.

    def files_of(self, submission: Submission) -> Path:
        """The folder holding a submission's files (read-only)."""
        return self.files / submission.digest

    def built_of(self, submission: Submission) -> Path:
        """Where a submission's built folder is kept (read-only once there)."""
        return self.builds / submission.digest

    # -- the end of the season -------------------------------------------------------------

    def freeze(self, when: dt.datetime) -> bool:
        """Close submissions for good; False if they were closed already."""
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO arena_facts VALUES ('frozen', ?)",
            (when.isoformat(timespec="seconds"),),
        )
        return cursor.rowcount == 1

    def frozen(self) -> str | None:
        """When submissions were closed, or None."""
        row = self._db.execute("SELECT value FROM arena_facts WHERE key = 'frozen'").fetchone()
        return None if row is None else str(row[0])

    def disable(self, number: int, reason: str) -> Submission:
        """Take submission ``number`` off the ladder and the leaderboard, for ``reason``."""
        submission = self.submission(number)
        if not reason.strip():
            raise ArenaError("say why the submission is disabled: the reason is empty")
        self.set_state(number, State.DISABLED, reason)
        return self.submission(submission.id)

    def choose(self, entrant: Entrant, number: int) -> Submission:
        """Make submission ``number``, one of the entrant's rated ones, its finalist."""
        submission = self.submission(number)
        if submission.entrant != entrant.name:
            raise ArenaError(f"no submission {number} of yours", 404)
        if submission.state not in (State.READY, State.RETIRED):
            raise ArenaError(
                f"submission {number} is {submission.state.value}: only a ready or retired "
                "one can play the final",
                409,
            )
        self._db.execute("INSERT OR REPLACE INTO chosen VALUES (?, ?)", (entrant.id, submission.id))
        return submission

    def chosen(self) -> dict[str, int]:
        """Each entrant's chosen finalist that can still play, by entrant name."""
        rows = self._db.execute(
            "SELECT e.name, c.submission FROM chosen c JOIN entrants e ON e.id = c.entrant "
            "JOIN submissions s ON s.id = c.submission WHERE s.state IN (?, ?)",
            (State.READY.value, State.RETIRED.value),
        )
        return {name: number for name, number in rows}

    def play_folder(self, submission: Submission) -> Path:
        """What plays: the built folder, or the files as submitted if it has no build."""
        built = self.built_of(submission)
        return built if built.exists() else self.files_of(submission)

    def refresh_active(self, per_entrant: int) -> list[Submission]:
        """Each entrant's newest ``per_entrant`` ready submissions, which play; an older
        ready one is retired (it keeps its games and rating)."""
        ready = self._submission_where("s.state = ?", State.READY.value)
        newest: dict[str, list[Submission]] = {}
        for submission in sorted(ready, key=lambda x: -x.id):
            newest.setdefault(submission.entrant, []).append(submission)
        active = []
        for mine in newest.values():
            active += mine[:per_entrant]
            for old in mine[per_entrant:]:
                self.set_state(old.id, State.RETIRED)
        return sorted(active, key=lambda x: x.id)

    def rated(self) -> list[Submission]:
        """Every submission that plays or played on the ladder."""
        return self._submission_where("s.state IN (?, ?)", State.READY.value, State.RETIRED.value)

    def received(self) -> list[Submission]:
        """The submissions waiting to be built and validated, oldest first."""
        return self._submission_where("s.state = ?", State.RECEIVED.value)

    def set_state(self, number: int, state: State, reason: str = "") -> None:
        """Move submission ``number`` to ``state``, saying why (a failure's reason)."""
        self._db.execute(
            "UPDATE submissions SET state = ?, reason = ? WHERE id = ?",
            (state.value, reason, number),
        )

    def requeue_unfinished(self) -> int:
        """Put back what a stopped arena was building or validating; how many."""
        cursor = self._db.execute(
            "UPDATE submissions SET state = ?, reason = '' WHERE state IN (?, ?)",
            (State.RECEIVED.value, State.BUILDING.value, State.VALIDATING.value),
        )
        return cursor.rowcount

    def write_log(self, number: int, name: str, text: str) -> None:
        """Keep log ``name`` (``build``, ``validation``) of submission ``number``, for its
        entrant alone."""
        folder = self.logs / str(number)
        folder.mkdir(mode=0o700, exist_ok=True)
        path = folder / f"{name}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)

    def keep_ladder_stderr(self, number: int, meeting: int, text: str) -> None:
        """Keep submission ``number``'s bots' stderr in ``meeting`` (log ``ladder-<meeting>``),
        and only the last :data:`LADDER_LOGS` of them."""
        self.write_log(number, f"ladder-{meeting:06d}", text)
        old = sorted((self.logs / str(number)).glob("ladder-*.log"))[:-LADDER_LOGS]
        for path in old:
            path.unlink()

    def logs_of(self, number: int) -> dict[str, str]:
        """Submission ``number``'s logs, by name."""
        folder = self.logs / str(number)
        if not folder.is_dir():
            return {}
        return {
            p.stem: p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(folder.glob("*.log"))
        }

    def submission(self, number: int) -> Submission:
        found = self._submission_where("s.id = ?", number)
        if not found:
            raise ArenaError(f"no submission {number}", 404)
        return found[0]

    def submissions(self) -> list[Submission]:
        """Every submission, oldest first."""
        return self._submission_where("1 = 1")

    def submissions_of(self, entrant: Entrant) -> list[Submission]:
        return self._submission_where("s.entrant = ?", entrant.id)

    def _submission_where(self, where: str, *args: object) -> list[Submission]:
        rows = self._db.execute(
            "SELECT s.id, e.name, s.digest, s.created, s.state, s.reason, s.files, s.bytes "
            f"FROM submissions s JOIN entrants e ON e.id = s.entrant WHERE {where} ORDER BY s.id",
            args,
        )
        return [Submission(r[0], r[1], r[2], r[3], State(r[4]), r[5], r[6], r[7]) for r in rows]
