"""A tournament's results in SQLite: one transaction per finished deal and per finished game.

The database belongs to one tournament (its config fingerprint, and the hashes of what
its entries run). A run holds an
exclusive ``flock`` on the file, so two runs never share it; readers (``tavolo
tournament table``) may read while it runs. Only finished games count: a game cut
short by a crash is played again from its seeds, and its finished deals stay stored
under their attempt number. A rerun deletes finished games, with all their deals.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.match.results import Faults

SCHEMA_VERSION = 1
MADE_SEED = "made_seed"
"""The ``meta`` fact holding the seed a run made for a tournament file without one."""
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
_LATER_SCHEMA = """
CREATE TABLE IF NOT EXISTS game_places (
    match_id INTEGER NOT NULL,
    number INTEGER NOT NULL,
    places TEXT NOT NULL,
    PRIMARY KEY (match_id, number)
);
CREATE TABLE IF NOT EXISTS entrant_keys (
    entry TEXT PRIMARY KEY,
    digest TEXT NOT NULL UNIQUE,
    made_at REAL NOT NULL,
    revoked_at REAL
);
CREATE TABLE IF NOT EXISTS think_times (
    match_id INTEGER NOT NULL,
    game INTEGER NOT NULL,
    entry TEXT NOT NULL,
    ms TEXT NOT NULL,
    bank_ms INTEGER NOT NULL,
    bank_used_ms INTEGER NOT NULL,
    PRIMARY KEY (match_id, game, entry),
    FOREIGN KEY (match_id, game) REFERENCES games(match_id, number) ON DELETE CASCADE
);
"""
"""Tables added after schema 1: made in every database a run opens, old ones included."""
_BUSY_MS = 5000


class StorageError(RuntimeError):
    """A database that cannot be used: locked, another tournament's, not ours, unreadable."""


class ChangedEntries(StorageError):
    """Entries that run other files than those their stored games were played with."""

    def __init__(self, path: Path, changed: Mapping[str, str]) -> None:
        self.entries = sorted(changed)
        """Their names."""
        which = " and ".join(f"{name!r} ({changed[name]})" for name in self.entries)
        one = len(self.entries) == 1
        options = " ".join(f"--entry {name}" for name in self.entries)
        super().__init__(
            f"{path}: {'entry' if one else 'entries'} {which} "
            f"{'runs another program' if one else 'run other programs'} than the stored games "
            "were played with; restore the old program, or run `tavolo tournament rerun "
            f"--db {path} {options}` to replay {'its' if one else 'their'} forfeited games "
            "with the new one and go on with it, or `tavolo tournament run --force` to move "
            "this database aside and start a new tournament"
        )


def _what_changed(before: Mapping[str, str], now: Mapping[str, str]) -> str:
    """Which files differ between two programs (file -> SHA-256), in words."""
    out = []
    for name, digest in now.items():
        if name in before and before[name] != digest:
            out.append(f"{name} changed")
        elif name not in before and digest not in before.values():
            out.append(f"{name} is new")
    out += [f"{n} is gone" for n, d in before.items() if n not in now and d not in now.values()]
    return "; ".join(out) or "other files"


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
    places: tuple[int, ...] | None = None
    """Each side's place as the game decided it (0 the first; level sides share one);
    None in a database made before places were stored."""


@dataclass(frozen=True)
class ThinkRow:
    """One entry's think times in one finished game."""

    entry: str
    ms: tuple[int, ...]
    """The think time of each of its answers, in ms, in order (the record's ``ms``)."""
    bank_ms: int
    """The time bank each of its slots had for the match; 0 without one."""
    bank_used_ms: int
    """The most of it any one of its slots had spent in the match by the game's end."""
    match_id: int = 0
    game: int = 0


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
        programs: Mapping[str, Mapping[str, str]] | None = None,
        accept: Collection[str] = (),
        file: str | None = None,
        force: bool = False,
    ) -> Store:
        """Open or create ``path`` for a run of the tournament with ``fingerprint``.

        Refuses a database of another tournament unless ``force``, which moves it aside
        to ``PATH.replaced-<time>`` (nothing is deleted) and starts a new one. ``facts``
        are stored as JSON in ``meta``: what tables need without the tournament file.
        ``programs`` is what each entry runs (file -> SHA-256): stored with a new database
        (or one made before they were), and an entry that runs other files than stored is
        refused with :class:`ChangedEntries` (or moved aside with ``force``), unless it is in
        ``accept`` (:meth:`delete_games` then stores the new ones). ``file`` is the
        tournament file's path, stored at every open.
        """
        lock_fd = _lock(path)
        moved: Path | None = None
        try:
            db = _connect(path, create=True)
            try:
                known = _meta(db, path)
                problem: StorageError | None = None
                if known and known.get("fingerprint") != fingerprint:
                    problem = StorageError(
                        f"{path} holds the results of another tournament "
                        f"({known.get('name', '?')!r}, or other entries or settings); "
                        "use another --db, or --force to move it aside and start afresh"
                    )
                elif known and programs is not None and "programs" in known:
                    stored = json.loads(known["programs"])
                    changed = {
                        name: _what_changed(stored[name], now)
                        for name, now in programs.items()
                        if name in stored and name not in accept
                        and sorted(stored[name].values()) != sorted(now.values())
                    }  # fmt: skip
                    if changed:
                        problem = ChangedEntries(path, changed)
                if problem is not None:
                    if not force:
                        raise problem
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
                rows = [("file", json.dumps(file))] if file is not None else []
                if programs is not None and "programs" not in known:
                    # New, or made before programs were stored: what runs now is the base.
                    rows.append(("programs", json.dumps(programs)))
                if rows:
                    with _transaction(db, path):
                        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", rows)
                db.executescript(_LATER_SCHEMA)
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

    # -- entrant keys ------------------------------------------------------------------------

    def entrant_keys(self) -> dict[str, bool]:
        """Entry -> whether its key is revoked, for every entry that has a key."""
        if not self._has_table("entrant_keys"):
            return {}
        rows = self.db.execute("SELECT entry, revoked_at FROM entrant_keys ORDER BY entry")
        return {entry: revoked is not None for entry, revoked in rows.fetchall()}

    def key_owner(self, digest: str) -> tuple[str, bool] | None:
        """(entry, revoked) of the key with SHA-256 ``digest``; None if no entry has it."""
        if not self._has_table("entrant_keys"):
            return None
        row = self.db.execute(
            "SELECT entry, revoked_at FROM entrant_keys WHERE digest = ?", (digest,)
        ).fetchone()
        return None if row is None else (row[0], row[1] is not None)

    def set_entrant_key(self, entry: str, digest: str) -> None:
        """Give ``entry`` the key of ``digest``; any key it had before opens nothing now."""
        with _transaction(self.db, self.path):
            self.db.execute(
                "INSERT OR REPLACE INTO entrant_keys VALUES (?, ?, ?, NULL)",
                (entry, digest, time.time()),
            )

    def revoke_entrant_key(self, entry: str) -> bool:
        """Revoke ``entry``'s key; False if it has none (or it is revoked already)."""
        with _transaction(self.db, self.path):
            cur = self.db.execute(
                "UPDATE entrant_keys SET revoked_at = ? WHERE entry = ? AND revoked_at IS NULL",
                (time.time(), entry),
            )
        return cur.rowcount > 0

    def _has_table(self, name: str) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return row is not None

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

    def batch(self) -> contextlib.AbstractContextManager[None]:
        """One transaction for everything stored inside it (a duplicate set played
        elsewhere): all of it is committed, or none."""
        return _transaction(self.db, self.path)

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

    def add_game(
        self,
        match_id: int,
        row: GameRow,
        lines: Sequence[str],
        think: Sequence[ThinkRow] = (),
    ) -> None:
        """Store a finished game with its whole record and its entries' think times, in
        its own transaction."""
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
            if row.places is not None:
                self.db.execute(
                    "INSERT INTO game_places VALUES (?, ?, ?)",
                    (match_id, row.number, json.dumps(list(row.places))),
                )
            self.db.executemany(
                "INSERT INTO think_times VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (match_id, row.number, t.entry, json.dumps(list(t.ms)), t.bank_ms,
                     t.bank_used_ms)
                    for t in think
                ],
            )  # fmt: skip

    def think_times(self, match_id: int | None = None) -> list[ThinkRow]:
        """Every entry's think times in every finished game (or in one match's), by match
        and game; none in a database made before think times were stored."""
        if not self._has_table("think_times"):
            return []
        query = "SELECT match_id, game, entry, ms, bank_ms, bank_used_ms FROM think_times"
        args: tuple[Any, ...] = ()
        if match_id is not None:
            query += " WHERE match_id = ?"
            args = (match_id,)
        rows = self.db.execute(query + " ORDER BY match_id, game, entry", args).fetchall()
        return [
            ThinkRow(entry, tuple(json.loads(ms)), bank, used, match, game)
            for match, game, entry, ms, bank, used in rows
        ]

    def games(self, match_id: int | None = None) -> list[GameRow]:
        places = (
            "(SELECT places FROM game_places AS p "
            "WHERE p.match_id = g.match_id AND p.number = g.number)"
            if self._has_table("game_places")
            else "NULL"
        )
        query = (
            "SELECT match_id, number, set_number, sides, winner, totals, termination, "
            f"forfeit_seat, deals, faults, deal_points, {places} FROM games AS g"
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

    def delete_games(
        self,
        games: Sequence[GameRow],
        *,
        programs: Mapping[str, Mapping[str, str]],
        why: Mapping[str, Any],
    ) -> None:
        """Delete finished ``games`` and every deal stored for them, all attempts, so that
        they are played again as if never played, and store ``programs`` as what the
        entries run from now on; ``why`` is kept in ``meta`` (``reruns``) with the games.
        One transaction.
        """
        keys = [(g.match_id, g.number) for g in games]
        known = self.meta().get("reruns")
        reruns = [] if known is None else json.loads(known)
        reruns.append(
            {
                **why,
                "at": time.time(),
                "games": [
                    {"match": g.match_id, "game": g.number, "termination": g.termination}
                    for g in games
                ],
            }
        )
        with _transaction(self.db, self.path):
            self.db.executemany("DELETE FROM deals WHERE match_id = ? AND game = ?", keys)
            self.db.executemany("DELETE FROM games WHERE match_id = ? AND number = ?", keys)
            self.db.executemany("DELETE FROM game_places WHERE match_id = ? AND number = ?", keys)
            self.db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [("programs", json.dumps(programs)), ("reruns", json.dumps(reruns))],
            )


@dataclass
class _Tx:
    db: sqlite3.Connection
    path: Path
    nested: bool = False
    """Inside another transaction (:meth:`Store.batch`): that one commits or rolls back."""

    def __enter__(self) -> None:
        if self.db.in_transaction:
            self.nested = True
            return
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise StorageError(_explain(self.path, exc)) from None

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if self.nested:
            return
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
        places=None if row[11] is None else tuple(json.loads(row[11])),
    )
