"""The arena's SQLite connection, shared safely by the API's threads and the event loop.

One connection serves them all; a transaction (``BEGIN`` … ``COMMIT``) must not take in a
statement another thread runs meanwhile. So every statement, and every transaction as a
whole, runs under one lock, and a statement's rows are read before the lock is let go.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


class Rows:
    """A statement's outcome: its rows (all read), the row it inserted, the rows it changed."""

    def __init__(self, rows: list[tuple[Any, ...]], lastrowid: int | None, rowcount: int) -> None:
        self._rows, self.lastrowid, self.rowcount = rows, lastrowid, rowcount

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None

    def value(self) -> Any:
        """The first column of the first row (a ``COUNT``): there must be one."""
        if not self._rows:
            raise LookupError("the statement gave no row")
        return self._rows[0][0]

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._rows)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._rows)


class Database:
    """An SQLite file in WAL mode, its statements and transactions one at a time."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        with self._lock:
            cursor = self._db.execute(sql, params)
            rows = cursor.fetchall() if cursor.description else []
            return Rows(rows, cursor.lastrowid, cursor.rowcount)

    def script(self, sql: str) -> None:
        with self._lock:
            self._db.executescript(sql)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` on any exception; nobody else's
        statement runs in between."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()
