"""SqliteFrontier: a job's URL queue, deduplicated by url_hash, leased in discovery order."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace

from ...errors import Conflict
from ...models import FrontierItem, UrlState
from .db import Database

_FINAL = frozenset((UrlState.DONE, UrlState.FAILED, UrlState.SKIPPED))
_COLUMNS = "url, url_hash, depth, parent, ord, state, attempts, lease_expires, reason, sitemap_rank"
LEASE_EXPIRED = "lease_expired"


class SqliteFrontier:
    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, job_id: str, items: Sequence[FrontierItem]) -> list[FrontierItem]:
        added: list[FrontierItem] = []
        with self._db.write() as conn:
            next_order = _next_order(conn, job_id)
            for item in items:
                stored = replace(
                    item,
                    order=next_order,
                    state=UrlState.PENDING,
                    attempts=0,
                    lease_expires=None,
                    reason=None,
                )
                if _insert(conn, job_id, stored):
                    added.append(stored)
                    next_order += 1
        return added

    def note_overflow(self, job_id: str, url_hashes: Sequence[str]) -> None:
        if not url_hashes:
            return
        with self._db.write() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO frontier_overflow (job_id, url_hash) VALUES (?, ?)",
                [(job_id, url_hash) for url_hash in url_hashes],
            )

    def overflow(self, job_id: str) -> int:
        rows = self._db.query(
            "SELECT COUNT(*) AS n FROM frontier_overflow WHERE job_id = ?", (job_id,)
        )
        return int(rows[0]["n"])

    def claim(self, job_id: str, limit: int, lease_s: float, now: float) -> list[FrontierItem]:
        if limit <= 0:
            return []
        expires = now + lease_s
        with self._db.write() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM frontier WHERE job_id = ? AND state = ? "
                "ORDER BY ord LIMIT ?",
                (job_id, str(UrlState.PENDING), limit),
            ).fetchall()
            conn.executemany(
                "UPDATE frontier SET state = ?, lease_expires = ? "
                "WHERE job_id = ? AND url_hash = ?",
                [(str(UrlState.LEASED), expires, job_id, row["url_hash"]) for row in rows],
            )
        return [replace(_item(row), state=UrlState.LEASED, lease_expires=expires) for row in rows]

    def finish(
        self, job_id: str, url_hash: str, state: UrlState, reason: str | None = None
    ) -> bool:
        if state not in _FINAL:
            raise ValueError(f"finish() takes done, failed or skipped, not {state}")
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE frontier SET state = ?, reason = ?, lease_expires = NULL "
                "WHERE job_id = ? AND url_hash = ? AND state = ?",
                (str(state), reason, job_id, url_hash, str(UrlState.LEASED)),
            )
            return cursor.rowcount == 1

    def release(self, job_id: str, url_hash: str, max_attempts: int, reason: str) -> UrlState:
        """An item that is not leased (finished, or already reclaimed) is left as it is,
        and its current state returned: a late duplicate release changes nothing."""
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT state, attempts FROM frontier WHERE job_id = ? AND url_hash = ?",
                (job_id, url_hash),
            ).fetchone()
            if row is None:
                raise Conflict(f"{url_hash} is not in the frontier of job {job_id}")
            if row["state"] != UrlState.LEASED:
                return UrlState(row["state"])
            return _give_back(conn, job_id, url_hash, row["attempts"], max_attempts, reason)

    def reclaim_expired(self, job_id: str, now: float, max_attempts: int) -> int:
        with self._db.write() as conn:
            rows = conn.execute(
                "SELECT url_hash, attempts FROM frontier "
                "WHERE job_id = ? AND state = ? AND lease_expires < ?",
                (job_id, str(UrlState.LEASED), now),
            ).fetchall()
            for row in rows:
                _give_back(
                    conn, job_id, row["url_hash"], row["attempts"], max_attempts, LEASE_EXPIRED
                )
        return len(rows)

    def counts(self, job_id: str) -> dict[UrlState, int]:
        """Every state is a key, with 0 when no item is in it."""
        rows = self._db.query(
            "SELECT state, COUNT(*) AS n FROM frontier WHERE job_id = ? GROUP BY state",
            (job_id,),
        )
        counts = dict.fromkeys(UrlState, 0)
        counts.update({UrlState(row["state"]): row["n"] for row in rows})
        return counts

    def items(self, job_id: str) -> list[FrontierItem]:
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM frontier WHERE job_id = ? ORDER BY ord", (job_id,)
        )
        return [_item(row) for row in rows]


def _next_order(conn: sqlite3.Connection, job_id: str) -> int:
    row = conn.execute(
        "SELECT COALESCE(MAX(ord) + 1, 0) FROM frontier WHERE job_id = ?", (job_id,)
    ).fetchone()
    return int(row[0])


def _insert(conn: sqlite3.Connection, job_id: str, item: FrontierItem) -> bool:
    cursor = conn.execute(
        f"INSERT OR IGNORE INTO frontier (job_id, {_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (
            job_id,
            item.url,
            item.url_hash,
            item.depth,
            item.parent,
            item.order,
            str(item.state),
            item.attempts,
            item.lease_expires,
            item.reason,
            item.sitemap_rank,
        ),
    )
    return cursor.rowcount == 1


def _give_back(
    conn: sqlite3.Connection,
    job_id: str,
    url_hash: str,
    attempts: int,
    max_attempts: int,
    reason: str,
) -> UrlState:
    """One more failed attempt: back to pending, or failed for good at the cap."""
    attempts += 1
    state = UrlState.FAILED if attempts >= max_attempts else UrlState.PENDING
    conn.execute(
        "UPDATE frontier SET state = ?, attempts = ?, reason = ?, lease_expires = NULL "
        "WHERE job_id = ? AND url_hash = ?",
        (str(state), attempts, reason, job_id, url_hash),
    )
    return state


def _item(row: sqlite3.Row) -> FrontierItem:
    return FrontierItem(
        url=row["url"],
        url_hash=row["url_hash"],
        depth=row["depth"],
        parent=row["parent"],
        order=row["ord"],
        state=UrlState(row["state"]),
        attempts=row["attempts"],
        lease_expires=row["lease_expires"],
        reason=row["reason"],
        sitemap_rank=row["sitemap_rank"],
    )
