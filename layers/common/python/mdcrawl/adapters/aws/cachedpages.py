"""Cached pages recorded without a processor invocation.

On a re-crawl most pages come from the content cache, and their conversion from the
markdown cache: the process step only reads that conversion back and writes the record
(a 1,769 MB function invoked, and billed, to wait on a few reads and writes). The
crawler already holds what the record needs, the page's cache entry, so for such a page
it builds the record the process step would have written (``process.cached_record``:
the same key, the same template decision) and the orchestrator writes it
(``outcomes.hand_over``). A page whose conversion is not cached for the job's template
state, or which waits for the template, goes to the process step as before.

Reads per batch: the markdown documents' locators ride in the crawler's one BatchGetItem
for the batch (with the bodies'), the documents of one processor pack come in one ranged
GET, and the job's template is one GET per invocation until it has settled (then kept
for the container's life, ``memo.SettledTemplates``).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from ...errors import StoreError
from ...models import CacheEntry, UrlState
from ...pipeline import templating
from ...pipeline.fetching import crawled_page
from ...pipeline.process import cached_record, lookup_keys
from ...ports import CrawlOutcome, CrawlRequest, CrawlResponse

log = logging.getLogger(__name__)


class CachedPages:
    """Per container: the bucket with the jobs' settled templates kept once read."""

    def __init__(self, blobs: Any) -> None:
        self._blobs = blobs

    def batch(self, request: CrawlRequest) -> CachedBatch | None:
        """The batch's view (one read of the job's template), or None when the job does
        not use the cache."""
        if not request.options.use_cache:
            return None
        return CachedBatch(request, self._blobs, templating.load(request.job_id, self._blobs))


class CachedBatch:
    def __init__(self, request: CrawlRequest, blobs: Any, state: templating.JobTemplate) -> None:
        self._request, self._blobs, self._state = request, blobs, state
        self._rules = request.options.generator_rules

    def markdown_keys(self, entries: dict[str, CacheEntry | None]) -> list[str]:
        """Where the conversions of the batch's cached pages would be, to locate them
        with the bodies."""
        items = {item.url_hash: item for item in self._request.items}
        return [
            key
            for h, entry in entries.items()
            if entry is not None and entry.content_hash and h in items
            for key in lookup_keys(
                crawled_page(self._request.job_id, items[h], entry, True),
                self._state.template,
                self._rules,
            )
        ]

    def recorded(self, response: CrawlResponse) -> CrawlResponse:
        """The response, each cached page with its record where one can be built."""
        cached = [o.page for o in response.outcomes if _cached(o) and o.page is not None]
        if not cached:
            return response
        prefetch = getattr(self._blobs, "prefetch", None)
        if prefetch is not None:  # one ranged GET per run of a pack
            keys = [lookup_keys(p, self._state.template, self._rules) for p in cached]
            prefetch([key for page_keys in keys for key in page_keys])
        return replace(response, outcomes=tuple(self._with_record(o) for o in response.outcomes))

    def _with_record(self, outcome: CrawlOutcome) -> CrawlOutcome:
        if not _cached(outcome) or outcome.page is None:
            return outcome
        try:
            record = cached_record(outcome.page, self._blobs, self._state, self._rules)
        except (StoreError, ValueError, TypeError) as exc:  # the process step decides then
            log.warning("no record from the cache for %s: %r", outcome.page.url, exc)
            return outcome
        return replace(outcome, record=record) if record is not None else outcome


def _cached(outcome: CrawlOutcome) -> bool:
    return outcome.state is UrlState.DONE and outcome.page is not None and outcome.page.from_cache
