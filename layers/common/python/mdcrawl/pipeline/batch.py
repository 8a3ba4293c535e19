"""A crawl batch run as a task with a time limit (a crawler Lambda invocation).

Two rules the task boundary adds to ``crawl.crawl_batch``: the batch answers before the
task's own timeout, with URLs still being fetched ``CRAWL_STOP_MARGIN_S`` before it
coming back PENDING (``timeout``: the orchestrator retries them) — per-request timeouts
x retries x redirects can add up past any function timeout; and only links and sitemap
URLs in the job's scope cross the boundary (the orchestrator drops the others anyway,
``outcomes.add_urls``; a sitemap index of 50,000 URLs or a 17,940-link page must not
fill the 6 MB response).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from ..models import FrontierItem, Scope, UrlState
from ..ports import CrawlOutcome, CrawlRequest, CrawlResponse
from ..urls import in_scope, normalize_url
from .crawl import CrawlDeps, crawl_batch, crawl_item

CRAWL_STOP_MARGIN_S = 5.0


async def crawl_within(
    request: CrawlRequest, deps: CrawlDeps, time_left_s: float | None = None
) -> CrawlResponse:
    """The batch's outcomes, scoped; with ``time_left_s``, answered in time."""
    if time_left_s is None:
        return scoped_response(await crawl_batch(request, deps), request.scope)
    tasks = [asyncio.ensure_future(crawl_item(request, i, deps)) for i in request.items]
    budget = max(time_left_s - CRAWL_STOP_MARGIN_S, 1.0)
    _, late = await asyncio.wait(tasks, timeout=budget)
    for task in late:
        task.cancel()
    await asyncio.gather(*late, return_exceptions=True)  # their leases given back
    outcomes = tuple(
        _out_of_time(item) if task in late else task.result()
        for task, item in zip(tasks, request.items, strict=True)
    )
    return scoped_response(CrawlResponse(request.job_id, outcomes), request.scope)


def _out_of_time(item: FrontierItem) -> CrawlOutcome:
    detail = "the crawler invocation ran out of time before this URL was fetched"
    return CrawlOutcome(item.url_hash, UrlState.PENDING, "timeout", detail=detail)


def scoped_response(response: CrawlResponse, scope: Scope) -> CrawlResponse:
    """Only links and sitemap URLs in the job's scope, normalised and deduplicated."""
    outcomes = tuple(
        replace(o, links=_in_scope(o.links, scope), sitemap=_in_scope(o.sitemap, scope))
        if o.links or o.sitemap
        else o
        for o in response.outcomes
    )
    return replace(response, outcomes=outcomes)


def _in_scope(urls: tuple[str, ...], scope: Scope) -> tuple[str, ...]:
    kept: dict[str, None] = {}
    for raw in urls:
        url = normalize_url(raw)
        if url and in_scope(url, scope):
            kept[url] = None
    return tuple(kept)
