"""BufferedEventLog: the events appended inside ``collecting()`` are stored together when
the block ends, as one run per job (``events.DynamoDbEventLog.append_many``: one
conditional put per item, not per event).

Who holds a block: the processor, around one invocation's pages (handler); the
orchestrator, around one batch of outcomes (``runtime.aws``, outermost, so the frontier
entry that settles the URLs is written before their events). Outside a block an append
is stored at once, as before.

Why this keeps the log's promises: an event is appended only after the write it
announces is durable (a page's record, a frontier entry), and it reaches the log later,
never sooner; the block stores what it holds also when it ends with an exception (the
records written before it are durable, and a redelivered batch skips them: their events
must not wait for it). What a hard kill between a record and the end of its block
costs (Lambda's timeout, out of memory): the held events, as a kill between the record
and its single put did before; the processor keeps ``STOP_MARGIN_S`` to end in time.

A terminal event (``job.completed``/``failed``/``cancelled``) is stored at once with
everything held before it: its caller may rely on it being in the log when append
returns. Any other held append returns its event with ``seq`` 0 (numbered when stored).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, Protocol

from ...models import Event, EventType
from .events import Draft

STORE_AT_ONCE = frozenset(
    {EventType.JOB_COMPLETED, EventType.JOB_FAILED, EventType.JOB_CANCELLED}
)
UNNUMBERED = 0  # the seq of an event still held


class RunLog(Protocol):
    def append_many(self, job_id: str, drafts: list[Draft]) -> list[Event]: ...

    def after(self, job_id: str, seq: int = 0, limit: int = 1000) -> list[Event]: ...


class BufferedEventLog:
    def __init__(self, inner: RunLog) -> None:
        self._inner = inner
        self._local = threading.local()  # each thread's blocks and held events

    @contextmanager
    def collecting(self) -> Iterator[None]:
        """Hold appends until the outermost block ends (also with an exception)."""
        self._local.depth = self._depth() + 1
        try:
            yield
        finally:
            self._local.depth -= 1
            if self._local.depth == 0:
                self.flush()

    def append(self, job_id: str, type: EventType, data: dict[str, Any], ts: float) -> Event:
        draft = Draft(EventType(type), data, ts)
        if self._depth() == 0:
            return self._inner.append_many(job_id, [draft])[0]
        self._held().append((job_id, draft))
        if draft.type in STORE_AT_ONCE:
            return self.flush()[-1]
        return Event(type=draft.type, job_id=job_id, seq=UNNUMBERED, ts=ts, data=data)

    def after(self, job_id: str, seq: int = 0, limit: int = 1000) -> list[Event]:
        return self._inner.after(job_id, seq, limit)

    def flush(self) -> list[Event]:
        """Store what this thread holds, each job's events in the order appended; the
        events stored. Nothing stays held, also when storing raises."""
        held, self._local.held = self._held(), []
        by_job: dict[str, list[Draft]] = {}
        for job_id, draft in held:
            by_job.setdefault(job_id, []).append(draft)
        stored: list[Event] = []
        for job_id, drafts in by_job.items():
            stored.extend(self._inner.append_many(job_id, drafts))
        return stored

    def _depth(self) -> int:
        return int(getattr(self._local, "depth", 0))

    def _held(self) -> list[tuple[str, Draft]]:
        held: list[tuple[str, Draft]] | None = getattr(self._local, "held", None)
        if held is None:
            held = self._local.held = []
        return held


def collecting(events: Any) -> AbstractContextManager[object]:
    """``events.collecting()`` for a log that holds appends, else a block doing nothing
    (the local runtime's log, a test's)."""
    block = getattr(events, "collecting", None)
    return block() if block is not None else nullcontext()
