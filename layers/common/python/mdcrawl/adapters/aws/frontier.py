"""DynamoDbFrontier: a job's URL queue in one DynamoDB partition, kept as a log.

The table holds, per job (PK ``job_id``), a log of entries (SK ``seq``: 0, 1, 2...): the
URLs added, the leases taken, the leases settled (``frontierlog.py``). Each entry is
written once, with a conditional put at the next seq (``attribute_not_exists``), so
the log is a total order even with several writers: a writer whose view is behind
loses the put, reads the entries it missed and decides again. The instance keeps the
fold of the log in memory; reads refresh it with one query for the entries after the
last one it knows, and nothing else is ever read.

Why a log rather than an item per URL: an item per URL is written three times (added,
leased, finished), and a claim has to find the next pending items through an index,
five write units per URL all told. Here one entry carries a page's new links (packed:
~25 bytes a URL), one entry a claim's lease, and inside a batch (``batch()``, what the
orchestrator applies after each crawl call comes back) the settles and adds of the
whole batch go in one entry, or in the next claim's: well under one write unit per
URL. A claim reads nothing: the next pending URLs are in the view.

What a crash costs: the settles and adds buffered in an open batch that was never
written. Their URLs are still leased in the log, expire, and are crawled again (from
the content cache); the page records they led to are written once (conditional), as
before. Outside a batch every call is written before it returns.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from ...errors import Conflict, StoreError
from ...models import FrontierItem, UrlState
from ...names import TTL_ATTRIBUTE
from ...ports import Clock
from .dynamo import Expr, expires_at, put_if_new, query_all
from .frontierlog import FINISHED, Entry, View
from .limits import DYNAMODB_ITEM
from .records import frontier_entry_from_attrs, frontier_entry_to_attrs

# Text per add entry, before packing: a real sitemap may list 50,000 URLs, and an entry
# must stay under DynamoDB's 400 KB item limit even if zlib gains nothing.
ADD_BYTES = DYNAMODB_ITEM * 3 // 4
_VIEWS_KEPT = 16  # jobs whose view a warm environment keeps (one job at a time, mostly)
_ATTEMPTS = 5  # a conditional put lost to another writer is decided again this often


class DynamoDbFrontier:
    def __init__(
        self, client: Any, table: str, clock: Clock, retention_s: float | None = None
    ) -> None:
        self._client = client
        self._table = table
        self._clock = clock  # stamps the TTL of new entries
        self._retention_s = retention_s
        self._views: OrderedDict[str, View] = OrderedDict()
        self._lock = threading.RLock()
        self._batch_depth = 0
        self._buffer: dict[str, Entry] = {}  # per job: changes not yet written (in a batch)

    # --- the port ------------------------------------------------------------------
    def add(self, job_id: str, items: Sequence[FrontierItem]) -> list[FrontierItem]:
        with self._lock:
            return self._write(job_id, lambda view: _additions(view, items), lambda e: e.add)

    def claim(self, job_id: str, limit: int, lease_s: float, now: float) -> list[FrontierItem]:
        if limit <= 0:
            return []
        with self._lock:

            def lease(view: View) -> Entry:
                return Entry(lease=view.next_pending(limit), lease_expires=now + lease_s)

            written = self._write(job_id, lease, lambda e: e.lease, urgent=True)
            view = self._view(job_id)
            return [view.items[order] for order in written]

    def finish(
        self, job_id: str, url_hash: str, state: UrlState, reason: str | None = None
    ) -> bool:
        if state not in FINISHED:
            raise ValueError(f"finish() ends a lease as done/failed/skipped, not {state}")
        with self._lock:

            def settle(view: View) -> Entry:
                order = self._order(view, job_id, url_hash)
                if order not in view.leased:
                    return Entry()
                attempts = view.items[order].attempts
                return Entry(settle=[(order, state, attempts, reason)])

            return bool(self._write(job_id, settle, lambda e: e.settle))

    def release(self, job_id: str, url_hash: str, max_attempts: int, reason: str) -> UrlState:
        with self._lock:

            def give_back(view: View) -> Entry:
                order = self._order(view, job_id, url_hash)
                if order not in view.leased:
                    return Entry()
                return Entry(settle=[_given_back(view, order, max_attempts, reason)])

            self._write(job_id, give_back, lambda e: e.settle)
            view = self._view(job_id)
            return view.items[self._order(view, job_id, url_hash)].state

    def reclaim_expired(self, job_id: str, now: float, max_attempts: int) -> int:
        with self._lock:
            self._refresh(job_id)

            def give_back(view: View) -> Entry:
                return Entry(
                    settle=[
                        _given_back(view, order, max_attempts, "lease_expired")
                        for order in view.expired(now)
                    ]
                )

            return len(self._write(job_id, give_back, lambda e: e.settle))

    def counts(self, job_id: str) -> dict[UrlState, int]:
        with self._lock:
            view = self._refresh(job_id)
            return {state: view.counts.get(state, 0) for state in UrlState}

    def note_overflow(self, job_id: str, url_hashes: Sequence[str]) -> None:
        def unseen(view: View) -> Entry:
            return Entry(overflow=sorted(set(url_hashes) - view.overflow))

        with self._lock:
            self._write(job_id, unseen, lambda e: e.overflow)

    def overflow(self, job_id: str) -> int:
        with self._lock:
            return len(self._refresh(job_id).overflow)

    def items(self, job_id: str) -> list[FrontierItem]:
        with self._lock:
            return list(self._refresh(job_id).items)

    def bump(self, job_id: str, url_hash: str, counter: str) -> int:
        """Add one to a per-URL counter kept in the log (how often finalize handed the
        page to the processor again); the new value. AWS runtime only."""
        with self._lock:

            def count(view: View) -> Entry:
                return Entry(bump=[(self._order(view, job_id, url_hash), counter)])

            (order, _), *_ = self._write(job_id, count, lambda e: e.bump, urgent=True)
            return self._view(job_id).counters[(order, counter)]

    # --- batching ------------------------------------------------------------------
    @contextmanager
    def batch(self) -> Iterator[None]:
        """Inside, settles and adds are applied to the view at once and written as one
        entry when the outermost batch ends (or with the next lease, which must follow
        them in the log): the orchestrator's ``OrchestratorDeps.batch``. The batch's
        caller must be the job's only writer meanwhile (it is: one orchestrator slice at
        a time); a conflict then raises StoreError, and the next slice carries on from the
        log."""
        with self._lock:
            self._batch_depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._batch_depth -= 1
                if self._batch_depth == 0:
                    for job_id in list(self._buffer):
                        self._flush(job_id)

    # --- writing -------------------------------------------------------------------
    def _write(
        self,
        job_id: str,
        decide: Callable[[View], Entry],
        result: Callable[[Entry], Sequence[Any]],
        urgent: bool = False,
    ) -> list[Any]:
        """Decide an entry from the view, apply it, and write it (now, or with the
        batch). ``result`` picks from the entry what the caller returns."""
        for _ in range(_ATTEMPTS):
            view = self._view(job_id)
            entry = decide(view)
            if entry.empty():
                return []
            buffered = self._buffer.get(job_id)
            if buffered is not None or (self._batch_depth and not urgent):
                # In a batch: applied now, written at its end (or with this, if urgent).
                view.apply(entry)
                self._buffer.setdefault(job_id, Entry()).merge(entry)
                if urgent or not self._batch_depth:
                    self._flush(job_id)
                return list(result(entry))
            if self._put_entries(job_id, view, entry, already_applied=False):
                return list(result(entry))
            self._refresh(job_id)  # another writer was first: decide again on its entries
        raise StoreError(f"job {job_id}: the frontier kept changing under this writer")

    def _flush(self, job_id: str) -> None:
        buffered = self._buffer.pop(job_id, None)
        if buffered is None or buffered.empty():
            return
        if not self._put_entries(job_id, self._view(job_id), buffered, already_applied=True):
            self._conflict_in_batch(job_id)

    def _conflict_in_batch(self, job_id: str) -> None:
        """Another writer wrote while this one held applied-but-unwritten changes: they
        cannot be put after its entries (orders were handed out). Forget them and the
        view; the caller's slice fails with a StoreError, which the state machine retries,
        and the next slice reads the log again."""
        self._buffer.pop(job_id, None)
        self._views.pop(job_id, None)
        raise StoreError(f"job {job_id}: another writer changed the frontier in a batch")

    def _put_entries(self, job_id: str, view: View, entry: Entry, already_applied: bool) -> bool:
        """Write ``entry`` at the view's next seq (adds of more than ``ADD_CHUNK`` URLs in
        entries of their own, first), then apply it unless that was done. False when
        the first put finds its seq taken: another writer got there first."""
        parts = _split(entry)
        ttl = expires_at(self._clock.now(), self._retention_s)
        for n, part in enumerate(parts):
            attrs = frontier_entry_to_attrs(job_id, view.next_seq, part)
            attrs[TTL_ATTRIBUTE] = ttl
            if not put_if_new(self._client, self._table, attrs, "seq"):
                if n == 0:
                    return False
                self._conflict_in_batch(job_id)  # a long add half written: read it again
            view.next_seq += 1
            if not already_applied:
                view.apply(part)
        return True

    # --- reading -------------------------------------------------------------------
    def _view(self, job_id: str) -> View:
        view = self._views.get(job_id)
        if view is None:
            view = self._views[job_id] = View()
            self._read_new(job_id, view)
            while len(self._views) > _VIEWS_KEPT:
                oldest = next(iter(self._views))
                if oldest in self._buffer:
                    break
                del self._views[oldest]
        self._views.move_to_end(job_id)
        return view

    def _refresh(self, job_id: str) -> View:
        """The view with every entry written so far (one query: those after it)."""
        view = self._view(job_id)
        if self._read_new(job_id, view) and job_id in self._buffer:
            self._conflict_in_batch(job_id)
        return view

    def _read_new(self, job_id: str, view: View) -> int:
        expr = Expr()
        key = (
            f"{expr.name('job_id')} = {expr.value(job_id)} AND "
            f"{expr.name('seq')} >= {expr.value(view.next_seq)}"
        )
        rows = query_all(
            self._client,
            TableName=self._table,
            KeyConditionExpression=key,
            ConsistentRead=True,
            **expr.kwargs(),
        )
        read = 0
        for row in rows:
            if int(row["seq"]) != view.next_seq:
                raise StoreError(f"job {job_id}: frontier log entry {row['seq']} is missing")
            view.apply(frontier_entry_from_attrs(row))
            view.next_seq += 1
            read += 1
        return read

    @staticmethod
    def _order(view: View, job_id: str, url_hash: str) -> int:
        order = view.order_of(url_hash)
        if order is None:
            raise Conflict(f"{url_hash} is not in the frontier of job {job_id}")
        return order


def _additions(view: View, items: Sequence[FrontierItem]) -> Entry:
    """The items whose url_hash the job does not have yet (the first of repeats), as
    stored: pending, no attempt, the next orders."""
    fresh: list[FrontierItem] = []
    seen: set[str] = set()
    for item in items:
        if item.url_hash in view.by_hash or item.url_hash in seen:
            continue
        seen.add(item.url_hash)
        stored = replace(
            item,
            order=len(view.items) + len(fresh),
            state=UrlState.PENDING,
            attempts=0,
            lease_expires=None,
            reason=None,
        )
        fresh.append(stored)
    return Entry(add=fresh)


def _given_back(
    view: View, order: int, max_attempts: int, reason: str
) -> tuple[int, UrlState, int, str | None]:
    """One more failed attempt: pending again, or failed for good at the cap."""
    attempts = view.items[order].attempts + 1
    state = UrlState.FAILED if attempts >= max_attempts else UrlState.PENDING
    return (order, state, attempts, reason)


def _split(entry: Entry) -> list[Entry]:
    """Adds in parts of at most ``ADD_BYTES`` of text (so that an item stays under
    DynamoDB's 400 KB whatever zlib makes of it); the last part carries the settles,
    lease and bumps (adds never depend on them, and they come after in the log)."""
    parts: list[Entry] = [Entry()]
    size = 0
    for item in entry.add:
        text = len(item.url) + len(item.parent or "") + len(item.url_hash) + 32
        if parts[-1].add and size + text > ADD_BYTES:
            parts.append(Entry())
            size = 0
        parts[-1].add.append(item)
        size += text
    for url_hash in entry.overflow:  # a page of 50,000 links past the cap: 1 MB of hashes
        text = len(url_hash) + 4
        if (parts[-1].add or parts[-1].overflow) and size + text > ADD_BYTES:
            parts.append(Entry())
            size = 0
        parts[-1].overflow.append(url_hash)
        size += text
    parts[-1].merge(
        Entry(
            settle=entry.settle,
            lease=entry.lease,
            lease_expires=entry.lease_expires,
            bump=entry.bump,
        )
    )
    return parts
