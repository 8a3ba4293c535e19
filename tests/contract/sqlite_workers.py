"""Code run in child processes by test_sqlite_local.py: each opens its own stores on
the shared cache folder, as the local runtime's conversion workers do.

Workers wait at a barrier so that they really write at the same time, and report
through a queue (multiprocessing primitives must travel as Process arguments)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mdcrawl.adapters.local import open_local_stores
from mdcrawl.models import EventType, UrlState


def bump_counters(root: Path, job_id: str, times: int, barrier: Any) -> None:
    with open_local_stores(root) as stores:
        barrier.wait()
        for _ in range(times):
            stores.jobs.add_counters(job_id, processed=1, words=3)


def append_events(root: Path, job_id: str, times: int, barrier: Any) -> None:
    with open_local_stores(root) as stores:
        barrier.wait()
        for n in range(times):
            stores.events.append(job_id, EventType.PAGE_DONE, {"n": n}, float(n))


def claim_until_empty(root: Path, job_id: str, results: Any, barrier: Any) -> None:
    """Claim small batches and finish them, reporting every url_hash this worker got."""
    claimed: list[str] = []
    with open_local_stores(root) as stores:
        barrier.wait()
        while batch := stores.frontier.claim(job_id, limit=3, lease_s=600.0, now=0.0):
            for item in batch:
                assert stores.frontier.finish(job_id, item.url_hash, UrlState.DONE)
                claimed.append(item.url_hash)
    results.put(claimed)


def append_events_forever(root: Path, job_id: str, ready: Any) -> None:
    """Append until killed; says when 20 events are in, so the kill lands mid-stream."""
    with open_local_stores(root) as stores:
        n = 0
        while True:
            stores.events.append(job_id, EventType.JOB_PROGRESS, {"n": n}, float(n))
            n += 1
            if n == 20:
                ready.put("ready")


def stream_blob_then_hang(root: Path, key: str, ready: Any) -> None:
    """Start a streamed write and never finish it: the parent kills us mid-object."""
    with open_local_stores(root) as stores, stores.blobs.writer(key) as out:
        out.write(b"x" * 1024 * 1024)
        out.flush()
        ready.put("ready")
        time.sleep(3600)
