"""SqliteContentCache: what was last fetched at each URL, shared by every job."""

from __future__ import annotations

from ...models import CacheEntry
from .codec import cache_doc, cache_from_doc
from .db import Database


class SqliteContentCache:
    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, url_hash: str) -> CacheEntry | None:
        rows = self._db.query("SELECT doc FROM cache WHERE url_hash = ?", (url_hash,))
        return cache_from_doc(rows[0]["doc"]) if rows else None

    def put(self, entry: CacheEntry) -> None:
        """Insert or replace: the latest fetch wins."""
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO cache (url_hash, doc) VALUES (?, ?) "
                "ON CONFLICT (url_hash) DO UPDATE SET doc = excluded.doc",
                (entry.url_hash, cache_doc(entry)),
            )
