"""Repair after a crash: settled URLs whose record was never written.

A process can die between the frontier marking a URL done and the process step
recording its page (or between a failure and its manifest line). Finalize would wait
for those records forever; this finds them. Fetched pages come back as CrawledPages to
process again (their bodies are in the content cache: no request); failures get their
record from the frontier's own reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models import CrawledPage, FrontierItem, PageRecord, UrlState
from ..ports import ContentCache, Frontier, PageStore
from .fetching import crawled_page, unconverted_record


@dataclass(frozen=True)
class RecoverDeps:
    frontier: Frontier
    pages: PageStore
    cache: ContentCache


def recover_unrecorded(job_id: str, deps: RecoverDeps) -> list[CrawledPage]:
    """Write the missing failure records; return the fetched pages to process again."""
    recorded = {record.url_hash for record in deps.pages.list(job_id)}
    to_process: list[CrawledPage] = []
    for item in deps.frontier.items(job_id):
        if item.url_hash in recorded or item.state in (UrlState.PENDING, UrlState.LEASED):
            continue
        page = _refetched(job_id, item, deps.cache) if item.state is UrlState.DONE else None
        if page is not None:
            to_process.append(page)
        else:
            deps.pages.put(_failure_record(job_id, item))
    return to_process


def _refetched(job_id: str, item: FrontierItem, cache: ContentCache) -> CrawledPage | None:
    entry = cache.get(item.url_hash)
    if entry is None:
        return None
    return crawled_page(job_id, item, entry, from_cache=True)


def _failure_record(job_id: str, item: FrontierItem) -> PageRecord:
    return unconverted_record(job_id, item, item.state, item.reason or "lost")
