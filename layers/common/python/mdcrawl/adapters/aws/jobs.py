"""DynamoDbJobStore: jobs with conditional status transitions and atomic ADD counters."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ...errors import JobNotFound
from ...models import Counters, Job, JobStatus, stored_job_value
from ...names import JOBS_OWNER_INDEX, TTL_ATTRIBUTE
from ...ports import Clock, iter_chunks
from .calls import call, call_if
from .dynamo import Expr, expires_at, from_item, put_if_new
from .records import (
    COUNTER_FIELDS,
    check_job_fields,
    counters_from_attrs,
    job_from_attrs,
    job_to_attrs,
)


class DynamoDbJobStore:
    def __init__(
        self, client: Any, table: str, clock: Clock, retention_s: float | None = None
    ) -> None:
        self._client = client
        self._table = table
        self._clock = clock
        self._retention_s = retention_s  # jobs expire (TTL) this long after creation

    def create(self, job: Job) -> bool:
        attrs = job_to_attrs(job)
        # A job built without created_at (0.0) must not get a TTL in 1970: DynamoDB would
        # delete it within hours. The clock stands in for the missing creation time.
        created = job.created_at or self._clock.now()
        attrs[TTL_ATTRIBUTE] = expires_at(created, self._retention_s)
        return put_if_new(self._client, self._table, attrs, "job_id")

    def get(self, job_id: str) -> Job | None:
        found = call(
            self._client.get_item, TableName=self._table, Key=_key(job_id), ConsistentRead=True
        )
        return job_from_attrs(from_item(found["Item"])) if "Item" in found else None

    def transition(
        self, job_id: str, allowed: Collection[JobStatus], to: JobStatus, **fields: Any
    ) -> bool:
        check_job_fields(fields)
        allowed = list(allowed)
        if not allowed:
            return False
        expr = Expr()
        update = expr.update(set_=_stored({**fields, "status": to}))
        options = ", ".join(expr.value(str(JobStatus(s))) for s in allowed)
        written = call_if(
            self._client.update_item,
            TableName=self._table,
            Key=_key(job_id),
            UpdateExpression=update,
            ConditionExpression=f"{expr.name('status')} IN ({options})",
            **expr.kwargs(),
        )
        return written is not None

    def update(self, job_id: str, **fields: Any) -> None:
        """Set attributes; ``status`` is refused here (only ``transition`` moves it)."""
        self.update_adding(job_id, {}, **fields)

    def update_adding(self, job_id: str, deltas: dict[str, int], **fields: Any) -> None:
        """``update`` and ``add_counters`` in one write (adapters/aws/counters.py)."""
        if "status" in fields:
            raise ValueError("status changes go through transition(), which guards them")
        check_job_fields(fields)
        unknown = set(deltas) - set(COUNTER_FIELDS)
        if unknown:
            raise ValueError(f"not counters: {sorted(unknown)}")
        if not fields and not deltas:
            return
        expr = Expr()
        self._update_existing(job_id, expr, expr.update(set_=_stored(fields), add=deltas))

    def add_counters(self, job_id: str, **deltas: int) -> Counters:
        unknown = set(deltas) - set(COUNTER_FIELDS)
        if unknown:
            raise ValueError(f"not counters: {sorted(unknown)}")
        expr = Expr()
        # ADD of 0 to every counter keeps the update valid when no delta is given and
        # makes ALL_NEW return all seven counters.
        update = expr.update(add={name: deltas.get(name, 0) for name in COUNTER_FIELDS})
        attrs = self._update_existing(job_id, expr, update)
        return counters_from_attrs(attrs)

    def list_for_owner(self, owner: str, limit: int = 100) -> list[Job]:
        if limit <= 0:
            return []
        expr = Expr()
        found = call(
            self._client.query,
            TableName=self._table,
            IndexName=JOBS_OWNER_INDEX,
            KeyConditionExpression=f"{expr.name('owner')} = {expr.value(owner)}",
            ScanIndexForward=False,  # newest first: the index sorts by created_at
            Limit=limit,
            **expr.kwargs(),
        )
        ids = [row["job_id"]["S"] for row in found.get("Items", [])]
        # The index projects keys only (schema.IndexSpec): the jobs themselves by key.
        jobs = {job.job_id: job for job in self._get_many(ids)}
        return [jobs[job_id] for job_id in ids if job_id in jobs]

    def _get_many(self, ids: list[str]) -> list[Job]:
        jobs: list[Job] = []
        for chunk in iter_chunks(ids, _BATCH_GET):
            request: dict[str, Any] = {self._table: {"Keys": [_key(i) for i in chunk]}}
            while request:
                answer = call(self._client.batch_get_item, RequestItems=request)
                rows = answer.get("Responses", {}).get(self._table, [])
                jobs.extend(job_from_attrs(from_item(row)) for row in rows)
                request = answer.get("UnprocessedKeys") or {}
        return jobs

    def _update_existing(self, job_id: str, expr: Expr, update: str) -> dict[str, Any]:
        """An update that must not create the item (an unknown id is JobNotFound)."""
        written = call_if(
            self._client.update_item,
            TableName=self._table,
            Key=_key(job_id),
            UpdateExpression=update,
            ConditionExpression=f"attribute_exists({expr.name('job_id')})",
            ReturnValues="ALL_NEW",
            **expr.kwargs(),
        )
        if written is None:
            raise JobNotFound(job_id)
        return from_item(written["Attributes"])


_BATCH_GET = 100  # BatchGetItem's limit


def _key(job_id: str) -> dict[str, Any]:
    return {"job_id": {"S": job_id}}


def _stored(fields: dict[str, Any]) -> dict[str, Any]:
    return {name: stored_job_value(name, value) for name, value in fields.items()}
