"""A tournament's results in SQLite: one transaction per finished deal and per finished game.

The database belongs to one tournament (its config fingerprint). A run holds an
exclusive ``flock`` on the file, so two runs never share it; readers (``tavolo
tournament table``) may read while it runs. Only finished games count: a game cut
short by a crash is played again from its seeds, and its finished deals stay stored
under their attempt number.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.match import Faults

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    id INTEGER PRIMARY KEY,
    round INTEGER NOT NULL,
    entries TEXT NOT NULL,
    seed TEXT NOT NULL,
    games INTEGER NOT NULL,
    stopped TEXT
);
CREATE TABLE IF NOT EXISTS byes (round INTEGER PRIMARY KEY, entry TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    match_id INTEGER NOT NULL REFERENCES matches(id),
    number INTEGER NOT NULL,
    set_number INTEGER NOT NULL,
    sides TEXT NOT NULL,
    winner INTEGER,
    totals TEXT NOT NULL,
    termination TEXT NOT NULL,
    forfeit_seat INTEGER,
    deals INTEGER NOT NULL,
    faults TEXT NOT NULL,
    deal_points TEXT NOT NULL,
    record TEXT NOT NULL,
    finished_at REAL NOT NULL,
    PRIMARY KEY (match_id, number)
);
CREATE TABLE IF NOT EXISTS deals (
    match_id INTEGER NOT NULL REFERENCES matches(id),
    game INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    record TEXT NOT NULL,
    points TEXT NOT NULL,
    PRIMARY KEY (match_id, game, attempt, deal)
);
"""
_BUSY_MS = 5000


class StorageError(RuntimeError):
    """A database that cannot be used: locked, another tournament's, not ours, unreadable."""


@dataclass(frozen=True)
class MatchRow:
    """A scheduled match."""

    id: int
    round: int
    entries: tuple[str, ...]
    """Entry names, one per side as seated in the match's first game."""
    seed: str
    games: int
    stopped: str | None
    """Why the match stopped before its last game (a decided SPRT), or None."""


@dataclass(frozen=True)
class GameRow:
    """A finished game."""

    match_id: int
    number: int
    set_number: int
    sides: tuple[str, ...]
    """The entry at each side."""
    winner: int | None
    """Winning side, None for a draw."""
    totals: tuple[int, ...]
    termination: str
    forfeit_seat: int | None
    deals: int
    faults: dict[str, Faults]
    """Per entry: timeouts, illegal actions, crashes."""
    deal_points: tuple[tuple[int, ...], ...] = ()
    """Points of each side in each finished deal."""


def _connect(path: Path, *, create: bool) -> sqlite3.Connection:
    if not create and not path.exists():
        raise StorageError(f"{path}: no such database")
    try:
        db = sqlite3.connect(path, timeout=_BUSY_MS / 1000, isolation_level=None)
        db.execute("PRAGMA foreign_keys = ON")
        if create:
            # WAL lets tables be read during a run; FULL makes every commit survive a power cut.
            db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        return db
    except sqlite3.OperationalError as exc:
        raise StorageError(_explain(path, exc)) from None
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"{path}: not a tournament database ({exc})") from None


def _explain(path: Path, exc: sqlite3.Error) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"{path}: the database is locked by another program ({text}); try again later"
    if "full" in text or "disk I/O" in text:
        return (
            f"{path}: cannot store the result, the disk is full ({text}); every deal and "
            "game stored before is kept: free some space and run the same command to resume"
        )
    return f"{path}: {text}"


class Store:
    """A tournament database open for a run (writes) or for reading."""

    def __init__(self, path: Path, db: sqlite3.Connection, lock_fd: int | None) -> None:
        self.path = path
        self.db = db
        self._lock_fd = lock_fd
        self.moved_aside: Path | None = None
        """Where ``--force`` moved another tournament's database, if it did."""

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open_for_run(
        cls,
        path: Path,
        *,
        fingerprint: str,
        name: str,
        config_text: str,
        facts: Mapping[str, Any] | None = None,
        force: bool = False,
    ) -> Store:
        """Open or create ``path`` for a run of the tournament with ``fingerprint``.

        Refuses a database of another tournament unless ``force``, which moves it aside
        to ``PATH.replaced-<time>`` (nothing is deleted) and starts a new one. ``facts``
        are stored as JSON in ``meta``: what tables need without the tournament file.
        """
        lock_fd = _lock(path)
        moved: Path | None = None
        try:
            db = _connect(path, create=True)
            try:
                known = _meta(db, path)
                if known and known.get("fingerprint") != fingerprint:
                    if not force:
                        raise StorageError(
                            f"{path} holds the results of another tournament "
                            f"({known.get('name', '?')!r}, or other entries or settings); "
                            "use another --db, or --force to move it aside and start afresh"
                        )
                    db.close()
                    moved = _move_aside(path)
                    os.close(lock_fd)
                    lock_fd = _lock(path)
                    db = _connect(path, create=True)
                    known = {}
                if not known:
                    db.executescript(_SCHEMA)  # commits by itself: kept out of _transaction
                    with _transaction(db, path):
                        db.executemany(
                            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                            [
                                ("schema", str(SCHEMA_VERSION)),
                                ("fingerprint", fingerprint),
                                ("name", name),
                                ("config", config_text),
                                ("created", str(time.time())),
                                *((k, json.dumps(v)) for k, v in (facts or {}).items()),
                            ],
                        )
                store = cls(path, db, lock_fd)
                store.moved_aside = moved
                return store
            except BaseException:
                db.close()
                raise
        except BaseException:
            os.close(lock_fd)
            raise

    @classmethod
    def open_for_reading(cls, path: Path) -> Store:
        """Open an existing database to read it (a run may be going on)."""
        db = _connect(path, create=False)
        try:
            if not _meta(db, path):
                raise StorageError(f"{path}: not a tournament database (no tournament in it)")
        except BaseException:
            db.close()
            raise
        return cls(path, db, None)

    def close(self) -> None:
        self.db.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta ------------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM meta").fetchall())

    def set_fact(self, key: str, value: Any) -> None:
        """Store ``value`` as JSON in ``meta``, replacing what was there."""
        with _transaction(self.db, self.path):
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def fact(self, key: str) -> Any:
        """A value stored as JSON by ``open_for_run(facts=...)`` or :meth:`set_fact`."""
        text = self.meta().get(key)
        if text is None:
            raise StorageError(f"{self.path}: the database has no {key!r}")
        return json.loads(text)

    # -- the schedule ----------------------------------------------------------------------

    def add_match(self, round_: int, entries: Sequence[str], seed: str, games: int) -> MatchRow:
        """The match of ``round_`` between ``entries``, stored now unless it is already."""
        key = json.dumps(list(entries))
        with _transaction(self.db, self.path):
            row = self.db.execute(
                "SELECT id FROM matches WHERE round = ? AND entries = ? AND seed = ?",
                (round_, key, seed),
            ).fetchone()
            if row is None:
                cur = self.db.execute(
                    "INSERT INTO matches (round, entries, seed, games) VALUES (?, ?, ?, ?)",
                    (round_, key, seed, games),
                )
                match_id = cur.lastrowid
                assert match_id is not None
            else:
                match_id = row[0]
        return self.match(match_id)

    def match(self, match_id: int) -> MatchRow:
        row = self.db.execute(
            "SELECT id, round, entries, seed, games, stopped FROM matches WHERE id = ?",
            (match_id,),
        ).fetchone()
        if row is None:
            raise StorageError(f"{self.path}: no match {match_id}")
        return _match_row(row)

    def matches(self) -> list[MatchRow]:
        rows = self.db.execute(
            "SELECT id, round, entries, seed, games, stopped FROM matches ORDER BY id"
        ).fetchall()
        return [_match_row(r) for r in rows]

    def stop_match(self, match_id: int, why: str) -> None:
        with _transaction(self.db, self.path):
            self.db.execute("UPDATE matches SET stopped = ? WHERE id = ?", (why, match_id))

    def add_bye(self, round_: int, entry: str) -> None:
        with _transaction(self.db, self.path):
            self.db.execute("INSERT OR IGNORE INTO byes VALUES (?, ?)", (round_, entry))

    def byes(self) -> dict[int, str]:
        return dict(self.db.execute("SELECT round, entry FROM byes").fetchall())

    # -- results ---------------------------------------------------------------------------

    def next_attempt(self, match_id: int, game: int) -> int:
        """The attempt number for a new try at a game that is not finished."""
        row = self.db.execute(
            "SELECT MAX(attempt) FROM deals WHERE match_id = ? AND game = ?", (match_id, game)
        ).fetchone()
        return 1 if row[0] is None else int(row[0]) + 1

    def add_deal(
        self, match_id: int, game: int, attempt: int, deal: int, lines: Sequence[str]
    ) -> None:
        """Store a finished deal with its record, in its own transaction."""
        score = json.loads(lines[-1])
        with _transaction(self.db, self.path):
            self.db.execute(
                "INSERT INTO deals VALUES (?, ?, ?, ?, ?, ?)",
                (
                    match_id,
                    game,
                    attempt,
                    deal,
                    "\n".join(lines) + "\n",
                    json.dumps(score.get("points")),
                ),
            )

    def add_game(self, match_id: int, row: GameRow, lines: Sequence[str]) -> None:
        """Store a finished game with its whole record, in its own transaction."""
        with _transaction(self.db, self.path):
            self.db.execute(
                "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    match_id,
                    row.number,
                    row.set_number,
                    json.dumps(list(row.sides)),
                    row.winner,
                    json.dumps(list(row.totals)),
                    row.termination,
                    row.forfeit_seat,
                    row.deals,
                    json.dumps({k: list(v) for k, v in row.faults.items()}),
                    json.dumps([list(p) for p in row.deal_points]),
                    "\n".join(lines) + "\n",
                    time.time(),
                ),
            )

    def games(self, match_id: int | None = None) -> list[GameRow]:
        query = (
            "SELECT match_id, number, set_number, sides, winner, totals, termination, "
            "forfeit_seat, deals, faults, deal_points FROM games"
        )
        args: tuple[Any, ...] = ()
        if match_id is not None:
            query += " WHERE match_id = ?"
            args = (match_id,)
        rows = self.db.execute(query + " ORDER BY match_id, number", args).fetchall()
        return [_game_row(r) for r in rows]

    def finished_numbers(self, match_id: int) -> set[int]:
        rows = self.db.execute("SELECT number FROM games WHERE match_id = ?", (match_id,))
        return {r[0] for r in rows}

    def game_record(self, match_id: int, number: int) -> str:
        row = self.db.execute(
            "SELECT record FROM games WHERE match_id = ? AND number = ?", (match_id, number)
        ).fetchone()
        if row is None:
            raise StorageError(f"{self.path}: no finished game {number} in match {match_id}")
        return str(row[0])

    def records(self) -> Iterator[tuple[int, int, str]]:
        """(match id, game number, record) of every finished game."""
        yield from self.db.execute(
            "SELECT match_id, number, record FROM games ORDER BY match_id, number"
        )

    def game_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def deal_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM deals").fetchone()[0])


@dataclass
class _Tx:
    db: sqlite3.Connection
    path: Path

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise StorageError(_explain(self.path, exc)) from None

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is None:
            try:
                self.db.execute("COMMIT")
                return
            except sqlite3.OperationalError as error:
                self._rollback()
                raise StorageError(_explain(self.path, error)) from None
        self._rollback()
        if isinstance(exc, sqlite3.OperationalError):
            raise StorageError(_explain(self.path, exc)) from None

    def _rollback(self) -> None:
        # SQLite rolls back by itself on some errors (a full disk among them): then
        # there is no transaction left to roll back.
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")


def _transaction(db: sqlite3.Connection, path: Path) -> _Tx:
    return _Tx(db, path)


def _lock(path: Path) -> int:
    """An exclusive flock on the database file: one run at a time."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StorageError(f"{path}: cannot open the database: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StorageError(
            f"{path}: the database is locked: another `tavolo tournament run` is using it"
        ) from None
    return fd


def _meta(db: sqlite3.Connection, path: Path) -> dict[str, str]:
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            return {}
        if "meta" not in tables:
            raise StorageError(f"{path}: a SQLite database, but not a tournament's")
        return dict(db.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.OperationalError as exc:
        raise StorageError(_explain(path, exc)) from None
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"{path}: not a tournament database ({exc})") from None


def _move_aside(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.replaced-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        source = Path(str(path) + suffix)
        if source.exists():
            source.rename(Path(str(target) + suffix))
    return target


def _match_row(row: tuple[Any, ...]) -> MatchRow:
    return MatchRow(row[0], row[1], tuple(json.loads(row[2])), row[3], row[4], row[5])


def _game_row(row: tuple[Any, ...]) -> GameRow:
    faults = {k: Faults(*v) for k, v in json.loads(row[9]).items()}
    return GameRow(
        match_id=row[0],
        number=row[1],
        set_number=row[2],
        sides=tuple(json.loads(row[3])),
        winner=row[4],
        totals=tuple(json.loads(row[5])),
        termination=row[6],
        forfeit_seat=row[7],
        deals=row[8],
        faults=faults,
        deal_points=tuple(tuple(p) for p in json.loads(row[10])),
    )
