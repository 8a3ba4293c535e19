"""DynamoDbEventLog: a job's events under gap-free, monotonic sequence numbers, stored
as runs: one item per writer's batch, not per event.

Layout: an item holds a run of consecutive events, keyed (``job_id``, ``seq``) by the
run's first seq, with ``count`` and ``events`` (the run's ``type``/``ts``/``data`` as
compact JSON, oldest first). An item written before runs existed (one event, its fields
at the top level) reads as a run of one.

How seqs are assigned: a writer puts its run at key = (the last item's seq + its count)
with ``attribute_not_exists``, the last item read with a strongly consistent Query, or
the end of the writer's own previous run. Items therefore tile 1..N without overlap:
a writer only ever puts right after the highest item it saw, and any other writer who
saw the same item puts at the same key, so one of them loses and reads again. A writer
that dies before its put leaves nothing behind; one that dies after it has stored whole
events. Why not a counter item (ADD, then put): a writer dying between the two leaves a
hole forever, and the port promises 1, 2, 3... without gaps. Here the item *is* the
reservation, so a number is used only by a stored event.

A lost conditional put is billed as a write of the item's size, a consistent Query of
the last key is one read unit (1/5 the price): so a writer reads the last item first,
unless its own previous run ended less than ``HINT_FRESH_S`` ago (a batch split over
several items). Writers batch through ``eventbuffer.BufferedEventLog``: one put per
processor invocation or orchestrator batch.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import StoreError
from ...models import Event, EventType
from ...names import TTL_ATTRIBUTE
from .calls import call
from .dynamo import Expr, expires_at, from_item, put_if_new

MAX_ATTEMPTS = 100  # each failed attempt means another writer's run was stored
HINT_FRESH_S = 0.25  # the runs of one batch split over several items are this close
# JSON bytes of one item's events: far under DynamoDB's 400 KB item limit, and a
# stream batch of 100 such items stays under Lambda's 6 MB event payload.
ITEM_BYTES = 32 * 1024
BOUNDS_KEPT = 64  # jobs whose last replay page's item bounds a reader remembers


@dataclass(frozen=True)
class Draft:
    """An event before it has a seq."""

    type: EventType
    data: dict[str, Any]
    ts: float


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
        # job -> (seq after this writer's last run, when): a hint only; the table decides.
        self._next_seen: dict[str, tuple[int, float]] = {}
        # job -> {first seq: count} of the items the last ``after`` read: items are
        # written once, so the next page (which starts where that one ended) finds the
        # item holding its first seq here instead of reading it.
        self._bounds: dict[str, dict[int, int]] = {}

    def append(self, job_id: str, type: EventType, data: dict[str, Any], ts: float) -> Event:
        return self.append_many(job_id, [Draft(EventType(type), data, ts)])[0]

    def append_many(self, job_id: str, drafts: Sequence[Draft]) -> list[Event]:
        """Store ``drafts`` as the job's next events, in order: one conditional put per
        run of at most ``ITEM_BYTES`` (another writer's run may fall between two)."""
        stored: list[Event] = []
        for run in runs([_encoded(d) for d in drafts]):
            stored.extend(self._put_run(job_id, run))
        return stored

    def after(self, job_id: str, seq: int = 0, limit: int = 1000) -> list[Event]:
        """Events with seq > ``seq``, oldest first: from the item holding seq + 1
        (which may start before it), following the query's pages until ``limit``."""
        start = seq + 1 if seq <= 0 else self._run_start(job_id, seq + 1)
        bounds: dict[int, int] = {}
        expr = Expr()
        request = dict(
            TableName=self._table,
            KeyConditionExpression=(
                f"{expr.name('job_id')} = {expr.value(job_id)} "
                f"AND {expr.name('seq')} >= {expr.value(start)}"
            ),
            ConsistentRead=True,
            **expr.kwargs(),
        )
        events: list[Event] = []
        # Each item holds at least one event: asking for as many items as events are
        # missing never stops short (a page stops at 1 MB: followed until full).
        while len(events) < limit:
            page = call(self._client.query, **request, Limit=limit - len(events))
            for item in page.get("Items", []):
                run = events_of(from_item(item))
                bounds[run[0].seq] = len(run)
                events.extend(e for e in run if e.seq > seq)
            if "LastEvaluatedKey" not in page:
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        self._remember(job_id, bounds)
        return events[:limit]

    # --- writing ---------------------------------------------------------------------
    def _put_run(self, job_id: str, run: list[dict[str, Any]]) -> list[Event]:
        start = self._hint(job_id)
        if start is None:
            start = self._next_seq(job_id)
        for _ in range(MAX_ATTEMPTS):
            if self._put_new(job_id, start, run):
                self._next_seen[job_id] = (start + len(run), self._monotonic())
                return [_event(job_id, start + i, body) for i, body in enumerate(run)]
            start = self._next_seq(job_id)
        raise StoreError(f"events of {job_id}: no free seq after {MAX_ATTEMPTS} attempts")

    def _hint(self, job_id: str) -> int | None:
        seen = self._next_seen.get(job_id)
        if seen is None or self._monotonic() - seen[1] > HINT_FRESH_S:
            return None
        return seen[0]

    def _put_new(self, job_id: str, start: int, run: list[dict[str, Any]]) -> bool:
        attrs = {
            "job_id": job_id,
            "seq": start,
            "count": len(run),
            "events": _dumps(run),
            TTL_ATTRIBUTE: expires_at(run[0]["ts"], self._retention_s),
        }
        return put_if_new(self._client, self._table, attrs, "seq")

    def _next_seq(self, job_id: str) -> int:
        """The seq after the last stored event (1 for a new job)."""
        last = self._last_item(job_id)
        return 1 if last is None else last[0] + last[1]

    def _remember(self, job_id: str, bounds: dict[int, int]) -> None:
        self._bounds.pop(job_id, None)
        if bounds:
            self._bounds[job_id] = bounds
            if len(self._bounds) > BOUNDS_KEPT:
                del self._bounds[next(iter(self._bounds))]

    def _run_start(self, job_id: str, seq: int) -> int:
        """The key of the item holding ``seq`` (or ``seq`` itself when none does yet)."""
        for first, count in self._bounds.get(job_id, {}).items():
            if first <= seq < first + count:
                return first
            if first + count == seq:  # the item after a known one starts there
                return seq
        last = self._last_item(job_id, at_most=seq)
        return seq if last is None or last[0] + last[1] <= seq else last[0]

    def _last_item(self, job_id: str, at_most: int | None = None) -> tuple[int, int] | None:
        """(seq, count) of the job's highest item (with a key ≤ ``at_most``), or None."""
        expr = Expr()
        condition = f"{expr.name('job_id')} = {expr.value(job_id)}"
        if at_most is not None:
            condition += f" AND {expr.name('seq')} <= {expr.value(at_most)}"
        found = call(
            self._client.query,
            TableName=self._table,
            KeyConditionExpression=condition,
            ScanIndexForward=False,
            Limit=1,
            ConsistentRead=True,
            ProjectionExpression=f"{expr.name('seq')}, {expr.name('count')}",
            **expr.kwargs(),
        )
        items = found.get("Items", [])
        if not items:
            return None
        item = from_item(items[0])
        return int(item["seq"]), int(item.get("count", 1))


def runs(
    bodies: Iterable[dict[str, Any]], limit: int = ITEM_BYTES
) -> Iterator[list[dict[str, Any]]]:
    """``bodies`` in order, cut into runs of at most ``limit`` bytes of JSON (an event
    larger than that alone goes alone)."""
    run: list[dict[str, Any]] = []
    size = 2  # the list's brackets
    for body in bodies:
        grows = len(_dumps(body).encode()) + 1
        if run and size + grows > limit:
            yield run
            run, size = [], 2
        run.append(body)
        size += grows
    if run:
        yield run


def events_of(attrs: dict[str, Any]) -> list[Event]:
    """The events an item holds (a run, or one event stored before runs), in seq order."""
    job_id, first = attrs["job_id"], int(attrs["seq"])
    if "events" not in attrs:
        return [event_of(attrs)]
    return [_event(job_id, first + i, body) for i, body in enumerate(json.loads(attrs["events"]))]


def event_of(attrs: dict[str, Any]) -> Event:
    """One event item of the layout before runs (its fields at the top level)."""
    return Event(
        type=EventType(attrs["type"]),
        job_id=attrs["job_id"],
        seq=int(attrs["seq"]),
        ts=attrs["ts"],
        data=attrs.get("data") or {},
    )


def _encoded(draft: Draft) -> dict[str, Any]:
    return {"type": str(draft.type), "ts": draft.ts, "data": draft.data}


def _event(job_id: str, seq: int, body: dict[str, Any]) -> Event:
    return Event(
        type=EventType(body["type"]), job_id=job_id, seq=seq, ts=body["ts"],
        data=body.get("data") or {},
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
