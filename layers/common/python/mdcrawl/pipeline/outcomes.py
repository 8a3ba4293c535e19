"""What the orchestrator does with each crawl outcome: frontier, counters, records, links.

Every write is guarded by the frontier's own answer (``finish`` is True only for the
call that finished a leased item), so an outcome delivered twice counts once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..models import CrawledPage, EventType, FrontierItem, Job, PageStatus, Scope, UrlState
from ..ports import CrawlOutcome, EventLog, Frontier, Invoker, JobStore, PageStore
from ..urls import in_scope, normalize_url, url_hash
from .fetching import unconverted_record
from .pagedone import record_converted

log = logging.getLogger(__name__)

# Words for a person, by the reason the crawler gave, for a start URL that failed.
START_FAILURES = {
    "not_html": "is not an HTML page",
    "too_large": "is larger than the page size cap",
    "robots_disallowed": "is disallowed by robots.txt (use --ignore-robots to crawl anyway)",
    "too_many_redirects": "redirects too many times (a redirect loop?)",
    "out_of_scope": "redirects outside the crawl's scope; start from the URL it redirects to",
}


@dataclass
class RunState:
    """What one orchestrator run keeps in memory; the stores stay the source of truth."""

    job: Job
    scope: Scope
    known: set[str]  # url hashes already in the frontier
    discovered: int
    # In scope, but past the page cap: those this run noted (``Frontier.note_overflow``),
    # at most ``overflow_room`` of them (``overflow_room_left``)
    overflow: set[str] = field(default_factory=set)
    overflow_room: int = 0
    start_error: str | None = None
    # Links (as the crawler gave them) already looked at in this run: every page of a
    # docs site repeats the same navigation, and judging a link again gives the same
    # answer (``known`` only grows, the scope is fixed, the room for pages only shrinks).
    seen_links: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class OutcomePorts:
    jobs: JobStore
    frontier: Frontier
    events: EventLog
    pages: PageStore
    invoker: Invoker
    max_attempts: int
    now: float


def apply_outcome(
    run: RunState, item: FrontierItem, outcome: CrawlOutcome, ports: OutcomePorts
) -> None:
    if outcome.state is UrlState.DONE and outcome.page is not None:
        _done(run, item, outcome, ports)
    elif outcome.state in (UrlState.FAILED, UrlState.SKIPPED):
        if ports.frontier.finish(run.job.job_id, item.url_hash, outcome.state, outcome.reason):
            record_unfetched(run, item, outcome.state, outcome, ports)
    else:
        release(run, item, outcome.reason or "retry", outcome.detail, ports)


def release(
    run: RunState, item: FrontierItem, reason: str, detail: str, ports: OutcomePorts
) -> None:
    """Give the URL back for another attempt; at the cap it fails for good. The start URL
    gets no second round: the fetcher already retried it, and the user is waiting."""
    cap = 1 if item.depth == 0 else ports.max_attempts
    state = ports.frontier.release(run.job.job_id, item.url_hash, cap, reason)
    if state is UrlState.FAILED:
        outcome = CrawlOutcome(item.url_hash, UrlState.FAILED, reason, detail=detail)
        record_unfetched(run, item, UrlState.FAILED, outcome, ports)


def _done(run: RunState, item: FrontierItem, outcome: CrawlOutcome, ports: OutcomePorts) -> None:
    page = outcome.page
    assert page is not None
    if not ports.frontier.finish(run.job.job_id, item.url_hash, UrlState.DONE):
        return  # a late duplicate: the item was reclaimed and is someone else's now
    ports.jobs.add_counters(run.job.job_id, crawled=1, cached=int(page.from_cache))
    hand_over(outcome, page, ports)
    if item.depth == 0 and outcome.sitemap:
        add_urls(run, outcome.sitemap, item, ports, from_sitemap=True)
    add_urls(run, outcome.links, item, ports, normalised=True)


def hand_over(outcome: CrawlOutcome, page: CrawledPage, ports: OutcomePorts) -> None:
    """The page to the process step; a cached page the crawler brought its record for
    (its conversion cached too) is recorded here, with no process step to run."""
    if outcome.record is None:
        ports.invoker.process(page)
    else:
        record_converted(outcome.record, ports.pages, ports.jobs, ports.events, ports.now)


def record_unfetched(
    run: RunState, item: FrontierItem, state: UrlState, outcome: CrawlOutcome, ports: OutcomePorts
) -> None:
    """A failed or skipped URL still gets a manifest line, with its reason."""
    record = unconverted_record(run.job.job_id, item, state, outcome.reason)
    status = record.status
    if ports.pages.put(record):
        counter = "failed" if status is PageStatus.FAILED else "skipped"
        ports.jobs.add_counters(run.job.job_id, **{counter: 1})
        data = {
            "url": item.url,
            "status": str(status),
            "reason": outcome.reason,
            "detail": outcome.detail,
            "order": item.order,
        }
        ports.events.append(run.job.job_id, EventType.PAGE_FAILED, data, ports.now)
    if item.depth == 0:
        run.start_error = start_error(item.url, outcome)


# URLs past the page cap a job remembers (their count is the job's ``left``): a page may
# link to a hundred thousand, and a hostile site's every page to as many others; past
# this many, ``left`` counts no further (each is a row locally, ~20 bytes of DynamoDB log
# on AWS).
MAX_OVERFLOW = 100_000


def overflow_room_left(remembered: int) -> int:
    """How many more URLs past the cap a run may note, the job holding ``remembered``."""
    return max(MAX_OVERFLOW - remembered, 0)


def start_error(url: str, outcome: CrawlOutcome) -> str:
    reason = outcome.reason or "fetch_error"
    if reason in START_FAILURES:
        return f"The start URL {url} {START_FAILURES[reason]}."
    if reason.startswith("http_"):
        return f"The start URL {url} answered HTTP {reason[5:]}."
    cause = f" ({outcome.detail})" if outcome.detail else ""
    return f"The start URL {url} could not be reached{cause}."


def add_urls(
    run: RunState,
    urls: Sequence[str],
    parent: FrontierItem,
    ports: OutcomePorts,
    from_sitemap: bool = False,
    normalised: bool = False,
) -> None:
    """New in-scope URLs to the frontier, in order, until the page cap. ``normalised``:
    the URLs are ``normalize_url``'s answers already (a crawl outcome's links)."""
    options = run.job.options
    depth = parent.depth + 1
    if depth > options.max_depth:
        return
    fresh = _new_in_scope(run, urls, normalised)
    room = max(options.max_pages - run.discovered, 0)
    past_cap = [hashed for _, hashed in fresh[room:] if hashed not in run.overflow]
    past_cap = past_cap[: max(run.overflow_room - len(run.overflow), 0)]
    if past_cap:  # kept in the frontier: a resumed or later run counts them once
        run.overflow.update(past_cap)
        ports.frontier.note_overflow(run.job.job_id, past_cap)
    items = _items(fresh[:room], urls, depth, parent, from_sitemap)
    if not items:
        return
    added = ports.frontier.add(run.job.job_id, items)
    run.known.update(i.url_hash for i in items)
    run.discovered += len(added)
    if added:
        ports.jobs.add_counters(run.job.job_id, discovered=len(added))


def _new_in_scope(
    run: RunState, urls: Sequence[str], normalised: bool
) -> list[tuple[str, str]]:
    """The new in-scope URLs, in order, each with its hash (hashed once: ~10 µs a URL)."""
    # A crawl outcome's links come normalised (``CrawlOutcome.links``): normalising them
    # again cost the orchestrator ~20 µs a new link (22,000 on 2,400 rustdoc pages).
    fresh: dict[str, str] = {}
    seen = run.seen_links
    for raw in urls:
        if raw in seen:
            continue
        seen.add(raw)
        url = raw if normalised else normalize_url(raw)
        if url and in_scope(url, run.scope):
            hashed = url_hash(url)
            if hashed not in run.known:
                fresh[url] = hashed
    return list(fresh.items())


def _items(
    urls: Sequence[tuple[str, str]],
    listed: Sequence[str],
    depth: int,
    parent: FrontierItem,
    from_sitemap: bool,
) -> list[FrontierItem]:
    ranks: dict[str | None, int] = {}
    if from_sitemap:  # its position in the sitemap, for the reading order
        for rank, raw in enumerate(listed):
            ranks.setdefault(normalize_url(raw), rank)
    return [
        FrontierItem(
            url=u, url_hash=hashed, depth=depth, parent=parent.url, sitemap_rank=ranks.get(u)
        )
        for u, hashed in urls
    ]
