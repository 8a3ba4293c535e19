"""SqliteConnectionStore: live-progress connections and the jobs each one follows."""

from __future__ import annotations

from .db import Database


class SqliteConnectionStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, connection_id: str, owner: str, ts: float) -> None:
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO connections (connection_id, owner, ts) VALUES (?, ?, ?) "
                "ON CONFLICT (connection_id) DO UPDATE SET owner = excluded.owner, "
                "ts = excluded.ts",
                (connection_id, owner, ts),
            )

    def subscribe(self, connection_id: str, job_id: str) -> None:
        with self._db.write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO subscriptions (connection_id, job_id) VALUES (?, ?)",
                (connection_id, job_id),
            )

    def owner(self, connection_id: str) -> str | None:
        rows = self._db.query(
            "SELECT owner FROM connections WHERE connection_id = ?", (connection_id,)
        )
        return rows[0]["owner"] if rows else None

    def for_job(self, job_id: str) -> list[str]:
        """The subscribed connection ids, sorted."""
        rows = self._db.query(
            "SELECT connection_id FROM subscriptions WHERE job_id = ? ORDER BY connection_id",
            (job_id,),
        )
        return [row["connection_id"] for row in rows]

    def remove(self, connection_id: str) -> None:
        """Forget the connection and its subscriptions (a no-op if it is unknown)."""
        with self._db.write() as conn:
            conn.execute("DELETE FROM subscriptions WHERE connection_id = ?", (connection_id,))
            conn.execute("DELETE FROM connections WHERE connection_id = ?", (connection_id,))
