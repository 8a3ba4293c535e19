"""SqlitePageStore: one record per page of a job, written once."""

from __future__ import annotations

from ...models import PageRecord
from .codec import page_doc, page_from_doc
from .db import Database


class SqlitePageStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def put(self, page: PageRecord) -> bool:
        with self._db.write() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO pages (job_id, url_hash, ord, doc) VALUES (?, ?, ?, ?)",
                (page.job_id, page.url_hash, page.order, page_doc(page)),
            )
            return cursor.rowcount == 1

    def get(self, job_id: str, url_hash: str) -> PageRecord | None:
        rows = self._db.query(
            "SELECT doc FROM pages WHERE job_id = ? AND url_hash = ?", (job_id, url_hash)
        )
        return page_from_doc(rows[0]["doc"]) if rows else None

    def list(self, job_id: str) -> list[PageRecord]:
        rows = self._db.query(
            "SELECT doc FROM pages WHERE job_id = ? ORDER BY ord, url_hash", (job_id,)
        )
        return [page_from_doc(row["doc"]) for row in rows]
