"""One SQLite database file shared by every local adapter, and by every process.

The local runtime converts pages in a process pool: each worker opens its own
``Database`` on the same file and writes pages, counters and events while the main
process claims URLs. WAL lets readers run beside the one writer; ``BEGIN IMMEDIATE``
takes the write lock up front, so a read-modify-write never finds its snapshot stale
half way (a deferred transaction that upgrades fails at once, without waiting); the
busy timeout makes writers queue instead of failing. Every change happens in a
transaction, so a kill -9 at any instant leaves the previous or the next state.

Writes can be batched: inside ``batch()``, every ``write()`` of the thread holding it
joins one transaction (one commit for a batch of outcomes, not one per statement),
while other threads wait for the batch to end. A write that may wait (a content cache
entry: losing one only costs a request) can ride along instead: ``on_transaction``
registers a function that writes what is waiting at the start of every transaction of
this process and before the connection closes, so each page's entry joins the next
batch of outcomes (which also marks that page done: both or neither) instead of
paying a transaction of its own.

One connection per ``Database``, guarded by a lock so the threads of one process can
share it. A forked child never reuses its parent's connection (SQLite forbids it): the
connection is reopened whenever the process id changed. That id is kept by a fork hook
rather than asked of the kernel per statement, and the hot paths (``query``, ``write``)
take the lock and translate errors in one step: the wrapping cost ~4 µs a statement,
as much as running a small one, on the ~10 statements a crawled page costs.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from ...errors import StoreError
from .schema import MIGRATIONS

BUSY_TIMEOUT_S = 60.0

_process_id = os.getpid()  # this process's id: kept current by the fork hook below


def _forked() -> None:
    global _process_id
    _process_id = os.getpid()


os.register_at_fork(after_in_child=_forked)


@contextmanager
def store_errors(action: str) -> Iterator[None]:
    """Translate sqlite3 errors at the boundary: callers only ever see StoreError."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StoreError(f"{action}: {exc}") from exc


class Rider(Protocol):
    """Writes that wait for this process's next transaction (``Database.on_transaction``)."""

    def waiting(self) -> bool: ...

    def write_waiting(self, conn: sqlite3.Connection) -> None: ...


class Database:
    """A lazily opened connection to one database file (no I/O until first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = _process_id
        self._batching = False  # only ever read by the thread holding the lock
        self._riders: list[Rider] = []

    def on_transaction(self, rider: Rider) -> None:
        """``rider.write_waiting(conn)`` at the start of each transaction, and on close
        when it has something waiting."""
        self._riders.append(rider)

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE ... COMMIT), rolled back on any error;
        inside ``batch()``, a part of the batch's transaction."""
        lock, conn = self._acquire()
        try:
            if self._batching:
                yield conn
            else:
                with self._transaction(conn):
                    yield conn
        except sqlite3.Error as exc:
            raise StoreError(f"write to {self.path}: {exc}") from exc
        finally:
            lock.release()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Every write of this thread inside the block in one transaction: all or none.
        The lock is held throughout, so no other thread's write lands in it."""
        with self._locked() as conn, store_errors(f"write to {self.path}"):
            if self._batching:  # nested: the outer batch commits
                yield
                return
            with self._transaction(conn):
                self._batching = True
                try:
                    yield
                finally:
                    self._batching = False

    @contextmanager
    def _transaction(self, conn: sqlite3.Connection) -> Iterator[None]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for rider in self._riders:
                rider.write_waiting(conn)
            yield
        except BaseException:
            # SQLite may already have rolled back (disk full, I/O error): a second
            # ROLLBACK would fail and hide the error that matters.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Run one read statement (its own consistent snapshot) and fetch every row."""
        lock, conn = self._acquire()
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"read from {self.path}: {exc}") from exc
        finally:
            lock.release()

    def version(self) -> tuple[int, int, int, int]:
        """Changes when the database may have: another connection committed (SQLite's
        ``data_version``) or this one changed a row (``total_changes``; its connection and
        process are part of it, the counters being per connection). Equal versions, equal
        content: a reader may keep what it decoded at one version until it changes."""
        with self._locked() as conn, store_errors(f"read from {self.path}"):
            data_version = conn.execute("PRAGMA data_version").fetchone()[0]
            return (self._pid, id(conn), data_version, conn.total_changes)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == _process_id:
                with store_errors(f"close {self.path}"):
                    if any(rider.waiting() for rider in self._riders):
                        with self._transaction(self._conn):
                            pass  # what is waiting is written
                    self._conn.close()
            self._conn = None

    @contextmanager
    def _locked(self) -> Iterator[sqlite3.Connection]:
        lock, conn = self._acquire()
        try:
            yield conn
        finally:
            lock.release()

    def _acquire(self) -> tuple[threading.RLock, sqlite3.Connection]:
        """This process's lock, taken (the caller releases that very lock), and its
        connection, opened on first use."""
        self._forget_parent_connection()
        lock = self._lock
        lock.acquire()
        try:
            if self._conn is None:
                with store_errors(f"open {self.path}"):
                    self._conn = connect(self.path)
            return lock, self._conn
        except BaseException:
            lock.release()
            raise

    def _forget_parent_connection(self) -> None:
        # After fork the inherited connection (and possibly a held lock) belong to the
        # parent: drop both without closing, the parent still uses that connection.
        if self._pid != _process_id:
            self._pid = _process_id
            self._lock = threading.RLock()
            self._conn = None


def connect(path: Path) -> sqlite3.Connection:
    """Open a connection in autocommit mode (we issue BEGIN ourselves) and tune it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def migrate(db: Database) -> int:
    """Bring the schema to the latest version (idempotent, safe when processes race).

    The version lives in ``PRAGMA user_version``, written in the same transaction as
    the statements of each step, so a crash mid-migration leaves the old version.
    """
    with db.write() as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise StoreError(
                f"{db.path} has schema version {version}; this mdcrawl knows up to "
                f"{len(MIGRATIONS)}: upgrade mdcrawl or use another cache folder"
            )
        for step in MIGRATIONS[version:]:
            for statement in step:
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
    return len(MIGRATIONS)


def open_database(path: Path) -> Database:
    """Open (creating if needed) the database at ``path`` with the current schema."""
    db = Database(path)
    migrate(db)
    return db
