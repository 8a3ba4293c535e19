"""A page's record, written by whichever step has it, and its ``page.done`` event.

Light on purpose (no converter): the orchestrator records a cached page the crawler
brought the record of (``CrawlOutcome.record``) with no process step to run."""

from __future__ import annotations

from ..models import EventType, PageRecord
from ..ports import EventLog, JobStore, PageStore


def page_event_data(record: PageRecord) -> dict[str, object]:
    """What ``page.done`` / ``page.failed`` say about a recorded page."""
    return {
        "url": record.url,
        "title": record.title,
        "words": record.words,
        "status": str(record.status),
        "reason": record.reason,
        "from_cache": record.from_cache,
        "order": record.order,
    }


def record_converted(
    record: PageRecord, pages: PageStore, jobs: JobStore, events: EventLog, now: float
) -> bool:
    """Record a page converted earlier: counted and announced only by the call that
    recorded it (a redelivered outcome changes nothing twice), as the process step does."""
    if not pages.put(record):
        return False
    jobs.add_counters(record.job_id, processed=1, words=record.words)
    events.append(record.job_id, EventType.PAGE_DONE, page_event_data(record), now)
    return True
