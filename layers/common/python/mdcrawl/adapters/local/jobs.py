"""SqliteJobStore: jobs with guarded status transitions and atomic counters."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection
from typing import Any

from ...errors import JobNotFound
from ...models import Counters, Job, JobStatus, stored_job_value
from .codec import JOB_COLUMNS, JOB_DOC_FIELDS, dumps, job_doc, job_from_doc
from .db import Database
from .schema import COUNTER_COLUMNS

_SETTABLE = frozenset((*JOB_COLUMNS, *JOB_DOC_FIELDS))


class SqliteJobStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def create(self, job: Job) -> bool:
        columns = ("job_id", *JOB_COLUMNS, *COUNTER_COLUMNS, "doc")
        values = (
            job.job_id,
            job.owner,
            str(job.status),
            job.created_at,
            *(getattr(job.counters, name) for name in COUNTER_COLUMNS),
            dumps(job_doc(job)),
        )
        sql = (
            f"INSERT OR IGNORE INTO jobs ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)})"
        )
        with self._db.write() as conn:
            return conn.execute(sql, values).rowcount == 1

    def get(self, job_id: str) -> Job | None:
        rows = self._db.query("SELECT * FROM jobs WHERE job_id = ?", (job_id,))
        return _job_from_row(rows[0]) if rows else None

    def transition(
        self, job_id: str, allowed: Collection[JobStatus], to: JobStatus, **fields: Any
    ) -> bool:
        _check_settable(fields)
        with self._db.write() as conn:
            row = conn.execute("SELECT status, doc FROM jobs WHERE job_id = ?", (job_id,))
            found = row.fetchone()
            if found is None or JobStatus(found["status"]) not in set(allowed):
                return False
            _write_fields(conn, job_id, found["doc"], {**fields, "status": to})
            return True

    def update(self, job_id: str, **fields: Any) -> None:
        """Set attributes; ``status`` is refused here (only ``transition`` moves it)."""
        if "status" in fields:
            raise ValueError("status changes go through transition(), which guards them")
        _check_settable(fields)
        with self._db.write() as conn:
            found = conn.execute("SELECT doc FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
            if found is None:
                raise JobNotFound(job_id)
            _write_fields(conn, job_id, found["doc"], fields)

    def add_counters(self, job_id: str, **deltas: int) -> Counters:
        unknown = set(deltas) - set(COUNTER_COLUMNS)
        if unknown:
            raise ValueError(f"not counters: {sorted(unknown)}")
        assignments = ", ".join(f"{name} = {name} + ?" for name in deltas) or "job_id = job_id"
        counters = ", ".join(COUNTER_COLUMNS)
        sql = f"UPDATE jobs SET {assignments} WHERE job_id = ? RETURNING {counters}"
        with self._db.write() as conn:
            row = conn.execute(sql, (*deltas.values(), job_id)).fetchone()
        if row is None:
            raise JobNotFound(job_id)
        return Counters(**{name: row[name] for name in COUNTER_COLUMNS})

    def list_for_owner(self, owner: str, limit: int = 100) -> list[Job]:
        rows = self._db.query(
            "SELECT * FROM jobs WHERE owner = ? ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (owner, limit),
        )
        return [_job_from_row(row) for row in rows]


def _check_settable(fields: dict[str, Any]) -> None:
    unknown = set(fields) - _SETTABLE
    if unknown:
        raise ValueError(f"cannot set job attributes {sorted(unknown)}")


def _write_fields(
    conn: sqlite3.Connection, job_id: str, doc_text: str, fields: dict[str, Any]
) -> None:
    """Merge ``fields`` into the row: columns in place, the rest into the JSON doc."""
    doc = json.loads(doc_text)
    columns = {}
    for name, value in fields.items():
        target = columns if name in JOB_COLUMNS else doc
        target[name] = stored_job_value(name, value)
    assignments = "".join(f"{name} = ?, " for name in columns)
    conn.execute(
        f"UPDATE jobs SET {assignments}doc = ? WHERE job_id = ?",
        (*columns.values(), dumps(doc), job_id),
    )


def _job_from_row(row: sqlite3.Row) -> Job:
    return job_from_doc(
        json.loads(row["doc"]),
        job_id=row["job_id"],
        owner=row["owner"],
        status=row["status"],
        created_at=row["created_at"],
        counters=Counters(**{name: row[name] for name in COUNTER_COLUMNS}),
    )
