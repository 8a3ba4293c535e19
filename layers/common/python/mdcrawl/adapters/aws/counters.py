"""The orchestrator's job counters, summed in memory and written once a second.

The orchestrator bumps a job's counters for every URL it settles (crawled, cached,
failed, skipped, discovered): one UpdateItem each, a write unit per URL. It is the
only writer of those counters and it writes the job's heartbeat every second anyway,
so ``BufferedCounters`` adds the sums to that write (one request: ``SET heartbeat ADD
crawled :n, ...``) and flushes before any status transition. Reads through it see the
stored counters plus what is still buffered.

What a crash costs: the sums of the last second are lost (the counters are a progress
display; the frontier and the page records, which decide what the job contains, are
written as before). The guards that make an outcome count once (``frontier.finish``)
run before the sum, so a redelivered outcome still counts once.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Collection
from dataclasses import replace
from typing import Any

from ...models import Counters, Job, JobStatus
from .jobs import DynamoDbJobStore
from .records import COUNTER_FIELDS


class BufferedCounters:
    def __init__(self, inner: DynamoDbJobStore) -> None:
        self._inner = inner
        self._pending: dict[str, Counter[str]] = {}
        self._known: dict[str, Counters] = {}
        self._lock = threading.Lock()

    def add_counters(self, job_id: str, **deltas: int) -> Counters:
        unknown = set(deltas) - set(COUNTER_FIELDS)
        if unknown:
            raise ValueError(f"not counters: {sorted(unknown)}")
        with self._lock:
            self._pending.setdefault(job_id, Counter()).update(deltas)
        # No read per URL: the totals as last read (the orchestrator reads the job
        # every tick) plus what is buffered.
        return _plus(self._known.get(job_id, Counters()), self._buffered(job_id))

    def update(self, job_id: str, **fields: Any) -> None:
        deltas = self._take(job_id)
        try:
            self._inner.update_adding(job_id, deltas, **fields)
        except BaseException:
            self._give_back(job_id, deltas)
            raise

    def transition(
        self, job_id: str, allowed: Collection[JobStatus], to: JobStatus, **fields: Any
    ) -> bool:
        self.flush(job_id)
        return self._inner.transition(job_id, allowed, to, **fields)

    def get(self, job_id: str) -> Job | None:
        job = self._inner.get(job_id)
        if job is None:
            return None
        with self._lock:
            self._known[job_id] = job.counters
        buffered = self._buffered(job_id)
        return replace(job, counters=_plus(job.counters, buffered)) if buffered else job

    def flush(self, job_id: str) -> None:
        if self._buffered(job_id):
            self.update(job_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _buffered(self, job_id: str) -> dict[str, int]:
        with self._lock:
            return {k: v for k, v in self._pending.get(job_id, Counter()).items() if v}

    def _take(self, job_id: str) -> dict[str, int]:
        with self._lock:
            taken = self._pending.pop(job_id, Counter())
        return {k: v for k, v in taken.items() if v}

    def _give_back(self, job_id: str, deltas: dict[str, int]) -> None:
        with self._lock:
            self._pending.setdefault(job_id, Counter()).update(deltas)


def _plus(counters: Counters, deltas: dict[str, int]) -> Counters:
    return Counters(**{k: v + deltas.get(k, 0) for k, v in counters.to_dict().items()})
