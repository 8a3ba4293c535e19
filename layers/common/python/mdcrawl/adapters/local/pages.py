"""SqlitePageStore: one record per page of a job, written once."""

from __future__ import annotations

from ...models import PageRecord
from .codec import page_doc, page_from_doc
from .db import Database


class SqlitePageStore:
    def __init__(self, db: Database) -> None:
        self._db = db
        # The last job listed, as decoded, and the database version it was read at:
        # finishing a local crawl lists the job's pages several times (recovery, the
        # records owed, finalize, the library) with nothing written in between.
        self._listed: tuple[str, tuple[int, int, int, int], tuple[PageRecord, ...]] | None = None

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
        version = self._db.version()
        listed = self._listed
        if listed is not None and listed[0] == job_id and listed[1] == version:
            return list(listed[2])  # records are frozen: sharing them is safe
        rows = self._db.query(
            "SELECT doc FROM pages WHERE job_id = ? ORDER BY ord, url_hash", (job_id,)
        )
        records = [page_from_doc(row["doc"]) for row in rows]
        self._listed = (job_id, version, tuple(records))
        return records
