"""Several fetched pages in one process step (one processor invocation per crawl batch
on AWS): each page exactly as ``process.process_page`` handles it alone, in the order
given, and the job counters of all of them added in one write at the end.

A blob store that packs writes (``packing()``: AWS, ``adapters/aws/packs.py``) gets the
whole batch as one block, and the pages are converted before any is recorded, so their
markdown cache documents go out as one object when the first record is written (a
record may point at its document only once that is stored).

A batch stops early, leaving its last pages unrecorded, when the time left
(``time_left``: the Lambda's remaining time) falls under ``STOP_MARGIN_S``: Lambda would
otherwise kill the invocation at its timeout and retry the whole batch, and a slow page
would keep taking its batch-mates down with it. The pages left are handed over again,
each alone, by finalize's ``rehand`` once the job has owed them records for a while.

What a crash costs: the counter sums of the pages recorded before it (the counters are
a progress display; the page records decide what the job contains). A redelivered batch
skips the pages already recorded and counts only the others, so no page counts twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any

from ..models import CrawledPage, PageRecord
from . import templating
from .counting import SummedCounters
from .process import (
    ProcessDeps,
    convert_ahead,
    generator_rules,
    lookup_keys,
    process_page,
    settle_template,
)

# Time kept back from the function's timeout: enough to record the pages converted
# (S3 and DynamoDB writes) and answer, with the slowest page's conversion still to spare.
STOP_MARGIN_S = 20.0


def process_pages(
    pages: Sequence[CrawledPage],
    deps: ProcessDeps,
    time_left: Callable[[], float] | None = None,
) -> list[PageRecord]:
    """The records of the pages handled, in order (all of them unless time ran short);
    counters written once (also when a page raised)."""
    summed = SummedCounters(deps.jobs)
    each = replace(deps, jobs=summed, pages=_known_records(pages, deps.pages))
    in_time = _in_time(time_left)
    with _packing(deps.blobs):
        try:
            if len(pages) > 1:
                _prefetch(pages, each)
                pages = _converted_in_time(pages, each, in_time)
            # The template's sample is checked once, after the batch's records: each
            # check lists every record of the job so far.
            records = [process_page(page, each, settle=False) for page in pages]
            if pages:
                settle_template(pages[0].job_id, [p.order for p in pages], each)
            return records
        finally:
            summed.flush()


def _converted_in_time(
    pages: Sequence[CrawledPage], deps: ProcessDeps, in_time: Callable[[], bool]
) -> list[CrawledPage]:
    """The leading pages converted before time ran short (at least the first)."""
    done: list[CrawledPage] = []
    for page in pages:
        if done and not in_time():
            break
        convert_ahead(page, deps)
        done.append(page)
    return done


def _in_time(time_left: Callable[[], float] | None) -> Callable[[], bool]:
    if time_left is None:
        return lambda: True
    return lambda: time_left() > STOP_MARGIN_S


def _prefetch(pages: Sequence[CrawledPage], deps: ProcessDeps) -> None:
    """A packing store reads the batch's cached conversions together, and the bodies
    of the pages it has none for (one request for where they are, one ranged read per
    run of neighbours in a pack), instead of two requests per page."""
    prefetch = getattr(deps.blobs, "prefetch", None)
    if prefetch is None:
        return
    rules = generator_rules(pages[0].job_id, deps.jobs)
    template = templating.load(pages[0].job_id, deps.blobs).template  # one job per batch
    keys = {page.url_hash: lookup_keys(page, template, rules) for page in pages}
    prefetch([key for page_keys in keys.values() for key in page_keys])
    prefetch([p.body_key for p in pages if not any(map(deps.blobs.exists, keys[p.url_hash]))])


def _known_records(pages: Sequence[CrawledPage], store: Any) -> Any:
    """A PageStore that reads the batch's existing records in one request (a store with
    ``get_many``: AWS) instead of one per page; one job per batch."""
    get_many = getattr(store, "get_many", None)
    if get_many is None or len(pages) < 2:
        return store
    return KnownRecords(store, get_many(pages[0].job_id, [p.url_hash for p in pages]))


class KnownRecords:
    """A PageStore with some pages' records already read (None: none was there)."""

    def __init__(self, inner: Any, found: dict[str, PageRecord | None]) -> None:
        self._inner, self._found = inner, found

    def get(self, job_id: str, url_hash: str) -> PageRecord | None:
        if url_hash in self._found:
            return self._found[url_hash]
        record: PageRecord | None = self._inner.get(job_id, url_hash)
        return record

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _packing(blobs: Any) -> AbstractContextManager[object]:
    packing = getattr(blobs, "packing", None)
    return packing() if packing is not None else nullcontext()
