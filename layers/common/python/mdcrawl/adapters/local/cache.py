"""SqliteContentCache: what was last fetched at each URL, shared by every job.

A put waits in memory until this process's next transaction on the database (the
orchestrator's batch of outcomes, a claim) or its close: a fetched page's entry costs no
transaction of its own, and it commits with (or before) the outcome that marks the page
done. A kill -9 loses at most the entries still waiting: cache misses, never an entry
without its body (bodies are stored before their entry is put). This process reads its
waiting entries; other processes see them once written.
"""

from __future__ import annotations

import sqlite3
import threading

from ...models import CacheEntry
from .codec import cache_doc, cache_from_doc
from .db import Database

_UPSERT = (
    "INSERT INTO cache (url_hash, doc) VALUES (?, ?) "
    "ON CONFLICT (url_hash) DO UPDATE SET doc = excluded.doc"
)


class SqliteContentCache:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._waiting: dict[str, CacheEntry] = {}
        self._lock = threading.Lock()
        db.on_transaction(self)

    def get(self, url_hash: str) -> CacheEntry | None:
        with self._lock:
            waiting = self._waiting.get(url_hash)
        if waiting is not None:
            return waiting
        rows = self._db.query("SELECT doc FROM cache WHERE url_hash = ?", (url_hash,))
        return cache_from_doc(rows[0]["doc"]) if rows else None

    def put(self, entry: CacheEntry) -> None:
        """Insert or replace: the latest fetch wins (written with the next transaction)."""
        with self._lock:
            self._waiting.pop(entry.url_hash, None)  # re-inserted last: written in put order
            self._waiting[entry.url_hash] = entry

    def waiting(self) -> bool:
        return bool(self._waiting)

    def write_waiting(self, conn: sqlite3.Connection) -> None:
        """Part of the database's transaction (``Database.on_transaction``)."""
        with self._lock:
            waiting, self._waiting = self._waiting, {}
        if waiting:
            rows = [(url_hash, cache_doc(entry)) for url_hash, entry in waiting.items()]
            conn.executemany(_UPSERT, rows)
