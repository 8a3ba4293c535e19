"""A job's frontier as an append-only log, and the in-memory view folded from it.

Each log entry (one DynamoDB item, ``records.frontier_entry_*``) holds any of, applied
in this order:

- ``add``: new URLs; their ``order`` is their position in the job (``first``, first+1...);
- ``settle``: ``[order, state, attempts, reason]`` per URL whose lease ended: finished
  (done / failed / skipped) or given back (pending again, one attempt more);
- ``lease``: the orders leased by one claim, and when that lease expires;
- ``bump``: ``[order, counter]``, a per-URL counter (how often finalize handed the page
  to the processor again).

The view answers every question the Frontier port asks (next pending in discovery
order, leases, counts, items) from memory, so a claim costs O(batch) whatever the
size of the job. Folding the log again gives the same view, so a new orchestrator (a
new Lambda environment, a slice after a crash) rebuilds it by reading the job's items.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from ...models import FrontierItem, UrlState

FINISHED = (UrlState.DONE, UrlState.FAILED, UrlState.SKIPPED)


@dataclass
class Entry:
    """What one log item says (see the module docstring)."""

    add: list[FrontierItem] = field(default_factory=list)  # order already assigned
    settle: list[tuple[int, UrlState, int, str | None]] = field(default_factory=list)
    lease: list[int] = field(default_factory=list)
    lease_expires: float | None = None
    bump: list[tuple[int, str]] = field(default_factory=list)
    overflow: list[str] = field(default_factory=list)  # url hashes past the page cap

    def empty(self) -> bool:
        return not (self.add or self.settle or self.lease or self.bump or self.overflow)

    def merge(self, later: Entry) -> None:
        """Append ``later``'s changes (adds and settles commute: a settle names a URL
        that was leased, an add only new ones)."""
        self.add.extend(later.add)
        self.settle.extend(later.settle)
        self.bump.extend(later.bump)
        self.overflow.extend(later.overflow)
        if later.lease:
            self.lease.extend(later.lease)
            self.lease_expires = later.lease_expires


class View:
    """The fold of a job's log: every item, by order and by url_hash, the pending ones
    in discovery order (``cursor`` for never-leased URLs, a heap for given-back ones),
    the leases held, counts by state."""

    def __init__(self) -> None:
        self.next_seq = 0  # the seq the next log entry is written at
        self.items: list[FrontierItem] = []  # index = order
        self.by_hash: dict[str, int] = {}
        self.leased: dict[int, float] = {}  # order -> lease_expires
        self.counts: Counter[UrlState] = Counter()
        self.counters: dict[tuple[int, str], int] = {}
        self._cursor = 0  # every order below it has left pending at least once
        self._retry: list[int] = []  # orders given back (may hold stale entries)
        self.overflow: set[str] = set()  # url hashes found past the page cap

    # --- folding -----------------------------------------------------------------
    def apply(self, entry: Entry) -> None:
        for item in entry.add:
            self._add(item)
        for order, state, attempts, reason in entry.settle:
            self._settle(order, state, attempts, reason)
        for order in entry.lease:
            self._set(order, state=UrlState.LEASED, lease_expires=entry.lease_expires)
            self.leased[order] = entry.lease_expires or 0.0
        for order, counter in entry.bump:
            key = (order, counter)
            self.counters[key] = self.counters.get(key, 0) + 1
        self.overflow.update(entry.overflow)

    def _add(self, item: FrontierItem) -> None:
        if item.order != len(self.items):
            raise ValueError(f"log out of order: item {item.order} after {len(self.items)}")
        self.items.append(item)
        self.by_hash[item.url_hash] = item.order
        self.counts[item.state] += 1

    def _settle(self, order: int, state: UrlState, attempts: int, reason: str | None) -> None:
        self.leased.pop(order, None)
        self._set(order, state=state, attempts=attempts, reason=reason, lease_expires=None)
        if state is UrlState.PENDING:
            heapq.heappush(self._retry, order)

    def _set(self, order: int, **changes: Any) -> None:
        before = self.items[order]
        after = replace(before, **changes)
        self.items[order] = after
        self.counts[before.state] -= 1
        self.counts[after.state] += 1

    # --- questions ---------------------------------------------------------------
    def next_pending(self, limit: int) -> list[int]:
        """Up to ``limit`` pending orders, lowest first, without changing the view.
        Given-back URLs sit in the heap (stale entries, leased again since, are dropped
        from its top); never-leased ones from the cursor on. Nothing here grows with the
        job but the heap, which holds only URLs given back and not yet leased again."""
        while self._retry and not self._pending(self._retry[0]):
            heapq.heappop(self._retry)
        while self._cursor < len(self.items) and not self._pending(self._cursor):
            self._cursor += 1
        heap, cursor = list(self._retry), self._cursor  # a copy to pop from
        picked: list[int] = []
        while len(picked) < limit:
            while heap and (not self._pending(heap[0]) or heap[0] in picked):
                heapq.heappop(heap)
            while cursor < len(self.items) and (not self._pending(cursor) or cursor in picked):
                cursor += 1
            fresh = cursor if cursor < len(self.items) else None
            if heap and (fresh is None or heap[0] < fresh):
                picked.append(heapq.heappop(heap))
            elif fresh is not None:
                picked.append(fresh)
            else:
                break
        return picked

    def _pending(self, order: int) -> bool:
        return self.items[order].state is UrlState.PENDING

    def expired(self, now: float) -> list[int]:
        """Leased orders whose lease ended before ``now`` (held at the instant itself)."""
        return sorted(order for order, expires in self.leased.items() if expires < now)

    def order_of(self, url_hash: str) -> int | None:
        return self.by_hash.get(url_hash)
