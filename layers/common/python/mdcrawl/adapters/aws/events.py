"""DynamoDbEventLog: a job's events under gap-free, monotonic sequence numbers.

How seq is assigned: a conditional put of seq = last + 1 (``attribute_not_exists``),
retried with a fresh ``last`` when another writer took that number. Why not a counter
item (ADD, then put): a writer that dies between the ADD and the put leaves a hole
forever, and the port promises 1, 2, 3... without gaps. Here the event item *is* the
reservation, so a number is used only by a stored event. The cost is a retry under
contention; the adapter remembers the last seq it saw per job, so a burst of events
from one writer needs one request each and no read.

A hint older than ``HINT_FRESH_S`` is not trusted: several processors and the
orchestrator append to the same job, so a writer's hint from its previous invocation
(or its progress event a second ago) is almost always taken, and a conditional put
that loses is billed as a write (1 unit) before the read that follows it; reading the
last seq first is a strongly consistent Query of one key (1 read unit, 1/5 the price).
Measured on the PostgreSQL manual: 2.2 write units per event with every hint trusted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ...errors import StoreError
from ...models import Event, EventType
from ...names import TTL_ATTRIBUTE
from .calls import call
from .dynamo import Expr, expires_at, from_item, put_if_new

MAX_ATTEMPTS = 100  # each failed attempt means another writer's event was stored
HINT_FRESH_S = 0.25  # a burst of one writer's events (a processor's batch) is this close


class DynamoDbEventLog:
    def __init__(
        self,
        client: Any,
        table: str,
        retention_s: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._table = table
        self._retention_s = retention_s
        self._monotonic = monotonic
        # job -> (last seq this writer stored, when): a hint only; the table decides.
        self._last_seen: dict[str, tuple[int, float]] = {}

    def append(self, job_id: str, type: EventType, data: dict[str, Any], ts: float) -> Event:
        seq = self._hint(job_id)
        if seq is None:
            seq = self._last_seq(job_id)
        for _ in range(MAX_ATTEMPTS):
            event = Event(type=EventType(type), job_id=job_id, seq=seq + 1, ts=ts, data=data)
            if self._put_new(event):
                self._last_seen[job_id] = (event.seq, self._monotonic())
                return event
            seq = self._last_seq(job_id)
        raise StoreError(f"events of {job_id}: no free seq after {MAX_ATTEMPTS} attempts")

    def after(self, job_id: str, seq: int = 0, limit: int = 1000) -> list[Event]:
        expr = Expr()
        request = dict(
            TableName=self._table,
            KeyConditionExpression=(
                f"{expr.name('job_id')} = {expr.value(job_id)} "
                f"AND {expr.name('seq')} > {expr.value(seq)}"
            ),
            ConsistentRead=True,
            **expr.kwargs(),
        )
        events: list[Event] = []
        # A page stops at 1 MB, maybe before ``limit`` events: follow it until full.
        while len(events) < limit:
            page = call(self._client.query, **request, Limit=limit - len(events))
            events.extend(event_of(from_item(item)) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return events

    def _hint(self, job_id: str) -> int | None:
        seen = self._last_seen.get(job_id)
        if seen is None or self._monotonic() - seen[1] > HINT_FRESH_S:
            return None
        return seen[0]

    def _put_new(self, event: Event) -> bool:
        attrs = event.to_dict()
        attrs[TTL_ATTRIBUTE] = expires_at(event.ts, self._retention_s)
        return put_if_new(self._client, self._table, attrs, "seq")

    def _last_seq(self, job_id: str) -> int:
        expr = Expr()
        found = call(
            self._client.query,
            TableName=self._table,
            KeyConditionExpression=f"{expr.name('job_id')} = {expr.value(job_id)}",
            ScanIndexForward=False,
            Limit=1,
            ConsistentRead=True,
            ProjectionExpression=expr.name("seq"),
            **expr.kwargs(),
        )
        items = found.get("Items", [])
        return int(items[0]["seq"]["N"]) if items else 0


def event_of(attrs: dict[str, Any]) -> Event:
    return Event(
        type=EventType(attrs["type"]),
        job_id=attrs["job_id"],
        seq=int(attrs["seq"]),
        ts=attrs["ts"],
        data=attrs.get("data") or {},
    )
