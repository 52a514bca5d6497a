"""Who is signed in to the arena's site: organiser tokens, and the sessions of the site's
cookie, each with its form token (CSRF).

A session's cookie value and the organiser's token are kept only as digests, as entrants'
tokens are (:mod:`.tokens`). A session lasts :data:`SESSION_HOURS`; signing out ends it.
"""

from __future__ import annotations

import datetime as dt
import hmac
import secrets
from dataclasses import dataclass

from tournaments.arena.database import Database
from tournaments.arena.tokens import digest, new_token, same_digest, well_formed

SESSION_HOURS = 12
SCHEMA = """
CREATE TABLE IF NOT EXISTS organiser_tokens (
    digest TEXT PRIMARY KEY,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS site_sessions (
    digest TEXT PRIMARY KEY,
    entrant INTEGER REFERENCES entrants(id),
    organiser INTEGER NOT NULL,
    csrf TEXT NOT NULL,
    expires TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class Session:
    """A signed-in browser: an entrant's (``entrant`` its id) or the organiser's."""

    entrant: int | None
    organiser: bool
    csrf: str
    """The token every form of this session carries back."""

    def form_ok(self, sent: object) -> bool:
        """Whether ``sent`` (a form's ``csrf`` field) is this session's, in constant time."""
        return same_form_token(sent, self.csrf)


def same_form_token(sent: object, expected: str) -> bool:
    """Whether a form's ``sent`` token is ``expected``, compared in constant time."""
    return isinstance(sent, str) and hmac.compare_digest(sent.encode(), expected.encode())


class Sessions:
    """Organiser tokens and site sessions, in the arena's database."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._db.script(SCHEMA)

    def new_organiser_token(self, now: dt.datetime) -> str:
        """A token that signs in to the admin page (shown once: only its digest is kept)."""
        token = new_token()
        self._db.execute(
            "INSERT INTO organiser_tokens VALUES (?, ?)",
            (digest(token), now.isoformat(timespec="seconds")),
        )
        return token

    def is_organiser(self, token: str) -> bool:
        if not well_formed(token):
            return False
        row = self._db.execute(
            "SELECT digest FROM organiser_tokens WHERE digest = ?", (digest(token),)
        ).fetchone()
        return row is not None and same_digest(token, row[0])

    def open(self, entrant: int | None, organiser: bool, now: dt.datetime) -> tuple[str, Session]:
        """A new session, and its cookie's value (kept only as a digest)."""
        cookie = secrets.token_urlsafe(32)
        session = Session(entrant, organiser, secrets.token_urlsafe(32))
        expires = now + dt.timedelta(hours=SESSION_HOURS)
        self._db.execute(
            "INSERT INTO site_sessions VALUES (?, ?, ?, ?, ?)",
            (digest(cookie), entrant, int(organiser), session.csrf, expires.isoformat()),
        )
        return cookie, session

    def find(self, cookie: str, now: dt.datetime) -> Session | None:
        """The live session of ``cookie``, or None (unknown, or expired: then forgotten)."""
        if not 32 <= len(cookie) <= 64:
            return None
        row = self._db.execute(
            "SELECT digest, entrant, organiser, csrf, expires FROM site_sessions WHERE digest = ?",
            (digest(cookie),),
        ).fetchone()
        if row is None or not same_digest(cookie, row[0]):
            return None
        if dt.datetime.fromisoformat(row[4]) <= now:
            self.close(cookie)
            return None
        return Session(row[1], bool(row[2]), row[3])

    def close(self, cookie: str) -> None:
        """End the session of ``cookie`` (nothing if there is none)."""
        self._db.execute("DELETE FROM site_sessions WHERE digest = ?", (digest(cookie),))

    def close_entrants(self, entrant: int) -> None:
        """End every session of ``entrant`` (disabled)."""
        self._db.execute("DELETE FROM site_sessions WHERE entrant = ?", (entrant,))
