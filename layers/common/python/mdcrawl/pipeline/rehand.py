"""Pages fetched but never recorded, handed to the process step again.

The process step runs asynchronously (a Lambda event on AWS): an event lost after the
platform's own retries, or an orchestrator that died between marking a URL done and
handing the page over, leaves finalize waiting for a record that will not come. Once
the job has been owed records for ``REPROCESS_AFTER_S``, each such page is handed over
again, alone (the first delivery carried its crawl batch: a page that kills the
processor must not take its batch-mates with it again; processing is idempotent, so a
late original changes nothing); a page handed over
``MAX_REHANDS`` times without a record (it times the processor out or exhausts its
memory every time) is recorded as failed, ``processor_failed``, so the job can finish.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..models import CrawledPage
from ..ports import Frontier, Invoker
from .finalize import FinalizeDeps
from .jobs import get_job
from .process import ConversionFailed, ProcessDeps, record_failure
from .recover import RecoverDeps, recover_unrecorded

REPROCESS_AFTER_S = 180.0
MAX_REHANDS = 2


@dataclass(frozen=True)
class RehandDeps:
    finalize: FinalizeDeps
    recover: RecoverDeps
    frontier: Frontier
    invoker: Invoker


def reprocess_if_stuck(job_id: str, deps: RehandDeps) -> int:
    """Hand the unrecorded fetched pages over again once they have been owed for
    ``REPROCESS_AFTER_S``; the number handed over (or given up) this time."""
    f = deps.finalize
    job, now = get_job(job_id, f.jobs), f.clock.now()
    if job.heartbeat is not None and now - job.heartbeat < REPROCESS_AFTER_S:
        return 0
    pages = recover_unrecorded(job_id, deps.recover)
    for page in pages:
        if count_rehand(deps.frontier, job_id, page.url_hash) > MAX_REHANDS:
            give_up_processing(page, f)
        else:
            deps.invoker.process(page)
    f.jobs.update(job_id, heartbeat=now)
    return len(pages)


def count_rehand(frontier: Any, job_id: str, url_hash: str) -> int:
    """How many times this page has now been handed to the processor again (kept on
    its frontier item, so the count survives orchestrator invocations)."""
    bump = getattr(frontier, "bump", None)
    return int(bump(job_id, url_hash, "rehands")) if bump is not None else 0


def give_up_processing(page: CrawledPage, f: FinalizeDeps) -> None:
    deps = ProcessDeps(f.blobs, f.pages, f.jobs, f.events, f.clock)
    failure = ConversionFailed(
        "processor_failed",
        f"the processor did not finish this page in {MAX_REHANDS + 1} deliveries "
        "(each retried by Lambda): it may exceed the function's time or memory",
    )
    record_failure(page, failure, deps)
