"""SqliteEventLog: a job's events numbered 1, 2, 3... without gaps, whoever appends."""

from __future__ import annotations

import json
from typing import Any

from ...models import Event, EventType
from .codec import dumps
from .db import Database


class SqliteEventLog:
    def __init__(self, db: Database) -> None:
        self._db = db

    def append(self, job_id: str, type: EventType, data: dict[str, Any], ts: float) -> Event:
        # The write lock is held from reading the last seq to inserting the next one,
        # so two appenders (threads or processes) can never pick the same number.
        with self._db.write() as conn:
            last = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM events WHERE job_id = ?", (job_id,)
            ).fetchone()[0]
            seq = int(last) + 1
            conn.execute(
                "INSERT INTO events (job_id, seq, type, ts, data) VALUES (?, ?, ?, ?, ?)",
                (job_id, seq, str(type), ts, dumps(data)),
            )
        return Event(type=EventType(type), job_id=job_id, seq=seq, ts=ts, data=data)

    def after(self, job_id: str, seq: int = 0, limit: int = 1000) -> list[Event]:
        rows = self._db.query(
            "SELECT seq, type, ts, data FROM events WHERE job_id = ? AND seq > ? "
            "ORDER BY seq LIMIT ?",
            (job_id, seq, limit),
        )
        return [
            Event(
                type=EventType(row["type"]),
                job_id=job_id,
                seq=row["seq"],
                ts=row["ts"],
                data=json.loads(row["data"]),
            )
            for row in rows
        ]
