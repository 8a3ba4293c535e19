"""The orchestrator over real local stores and a scripted in-process invoker."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from mdcrawl.adapters.local import LocalStores, open_local_stores
from mdcrawl.models import (
    CrawledPage,
    CrawlOptions,
    EventType,
    JobStatus,
    PageRecord,
    PageStatus,
    UrlState,
)
from mdcrawl.pipeline.finalize import FinalizeDeps, finalize
from mdcrawl.pipeline.jobs import JobDeps, cancel_job, create_job, resume_job
from mdcrawl.pipeline.orchestrate import OrchestratorDeps, Tuning, orchestrate
from mdcrawl.pipeline.process import ProcessDeps, process_page
from mdcrawl.ports import CrawlOutcome, CrawlRequest, CrawlResponse

BASE = "http://docs.test/"
DEFAULTS = CrawlOptions()
FAST = Tuning(tick_s=0.01)


class ScriptedInvoker:
    """Each URL's outcomes in turn: 'ok', 'retry', 'raise' (the call fails), 'skip'."""

    def __init__(self, script: dict[str, list[str]], links: dict[str, tuple[str, ...]]):
        self.script, self.links = script, links
        self.crawled: list[str] = []
        self.processed: list[CrawledPage] = []
        self.on_crawl = lambda: None

    async def crawl(self, request: CrawlRequest) -> CrawlResponse:
        self.on_crawl()
        await asyncio.sleep(0.02)  # a crawl takes a while: the orchestrator ticks meanwhile
        outcomes = []
        for item in request.items:
            self.crawled.append(item.url)
            step = (self.script.get(item.url) or ["ok"]).pop(0) if item.url in self.script else "ok"
            if step == "raise":
                raise RuntimeError("crawler died")
            outcomes.append(self._outcome(request, item, step))
        return CrawlResponse(request.job_id, tuple(outcomes))

    def _outcome(self, request, item, step):  # type: ignore[no-untyped-def]
        if step == "retry":
            return CrawlOutcome(item.url_hash, UrlState.PENDING, "timeout")
        if step == "skip":
            return CrawlOutcome(item.url_hash, UrlState.SKIPPED, "not_html")
        page = CrawledPage(
            request.job_id,
            item.url,
            item.url_hash,
            item.url,
            "h",
            "k",
            item.order,
            item.depth,
            False,
        )
        return CrawlOutcome(
            item.url_hash, UrlState.DONE, page=page, links=self.links.get(item.url, ())
        )

    def process(self, page: CrawledPage) -> None:
        self.processed.append(page)


@pytest.fixture
def stores(tmp_path: Path):
    with open_local_stores(tmp_path) as opened:
        yield opened


def run(stores: LocalStores, invoker: ScriptedInvoker, options: CrawlOptions = DEFAULTS):
    job = create_job(
        BASE, options, "me", JobDeps(stores.jobs, stores.frontier, stores.events, stores.clock)
    )
    deps = OrchestratorDeps(
        stores.jobs, stores.frontier, stores.events, stores.pages, invoker, stores.clock
    )
    return job.job_id, deps


async def test_links_in_scope_are_crawled_once_and_failures_recorded(stores: LocalStores) -> None:
    links = {
        BASE: (BASE + "a", BASE + "b", "http://other.test/x", BASE + "a"),
        BASE + "a": (BASE, BASE + "b", BASE + "c"),
    }
    invoker = ScriptedInvoker({BASE + "c": ["skip"]}, links)
    job_id, deps = run(stores, invoker)
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    assert sorted(invoker.crawled) == [BASE, BASE + "a", BASE + "b", BASE + "c"]
    assert len(invoker.processed) == 3
    job = stores.jobs.get(job_id)
    assert job.status is JobStatus.FINALIZING and not job.truncated
    c = job.counters
    assert (c.discovered, c.crawled, c.skipped) == (4, 3, 1)
    [skipped] = stores.pages.list(job_id)
    assert (skipped.status, skipped.reason) == (PageStatus.SKIPPED, "not_html")


async def test_transient_failures_retry_up_to_the_cap(stores: LocalStores) -> None:
    invoker = ScriptedInvoker(
        {BASE + "a": ["retry", "raise", "ok"], BASE + "b": ["retry"] * 5},
        {BASE: (BASE + "a", BASE + "b")},
    )
    job_id, deps = run(stores, invoker)
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    items = {i.url: i for i in stores.frontier.items(job_id)}
    assert items[BASE + "a"].state is UrlState.DONE
    assert (items[BASE + "b"].state, items[BASE + "b"].attempts) == (UrlState.FAILED, 3)
    assert stores.jobs.get(job_id).counters.failed == 1


async def test_start_url_failure_fails_the_job(stores: LocalStores) -> None:
    invoker = ScriptedInvoker({BASE: ["skip"]}, {})
    job_id, deps = run(stores, invoker)
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "done"
    job = stores.jobs.get(job_id)
    assert job.status is JobStatus.FAILED and "is not an HTML page" in job.error


async def test_page_cap_truncates_and_counts_what_is_left(stores: LocalStores) -> None:
    links = {BASE: tuple(f"{BASE}p{i}" for i in range(10))}
    job_id, deps = run(stores, ScriptedInvoker({}, links), CrawlOptions(max_pages=4))
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    job = stores.jobs.get(job_id)
    assert (job.counters.discovered, job.truncated, job.left) == (4, True, 7)


async def test_links_repeated_on_every_page_are_judged_once_and_counted_once(
    stores: LocalStores,
) -> None:
    # Docs pages repeat their navigation: a link seen again must not change the outcome.
    nav = tuple(f"{BASE}p{i}" for i in range(1, 5))
    links = {BASE: (BASE + "a", BASE + "b", *nav), BASE + "a": (*nav, BASE, BASE + "p5")}
    invoker = ScriptedInvoker({}, links)
    job_id, deps = run(stores, invoker, CrawlOptions(max_pages=3))
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    assert sorted(invoker.crawled) == [BASE, BASE + "a", BASE + "b"]
    job = stores.jobs.get(job_id)
    assert (job.counters.discovered, job.truncated, job.left) == (3, True, 5)


async def test_cancel_stops_the_crawl(stores: LocalStores) -> None:
    invoker = ScriptedInvoker({}, {BASE: (BASE + "a",)})
    job_id, deps = run(stores, invoker)
    invoker.on_crawl = lambda: cancel_job(
        job_id, JobDeps(stores.jobs, stores.frontier, stores.events, stores.clock)
    )
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    assert invoker.crawled == [BASE]  # nothing claimed after the cancel
    # Pages handed to the process step are still in flight: no terminal event yet.
    assert stores.jobs.get(job_id).status is JobStatus.FINALIZING
    fin = FinalizeDeps(
        stores.jobs, stores.frontier, stores.pages, stores.blobs, stores.events, stores.clock
    )
    assert finalize(job_id, fin, _no_output) == "wait"
    assert EventType.JOB_CANCELLED not in [e.type for e in stores.events.after(job_id)]
    process = ProcessDeps(stores.blobs, stores.pages, stores.jobs, stores.events, stores.clock)
    for page in invoker.processed:
        process_page(page, process)
    assert finalize(job_id, fin, _no_output) == "done"
    assert stores.jobs.get(job_id).status is JobStatus.CANCELLED
    types = [e.type for e in stores.events.after(job_id)]
    assert types[-1] is EventType.JOB_CANCELLED and types.count(EventType.JOB_CANCELLED) == 1


def _no_output(name: str):  # type: ignore[no-untyped-def]
    raise AssertionError(f"a cancelled job writes no outputs, not {name}")


async def test_stop_at_asks_to_continue_and_the_next_run_finishes(stores: LocalStores) -> None:
    invoker = ScriptedInvoker({}, {BASE: (BASE + "a",)})
    job_id, deps = run(stores, invoker)
    assert await orchestrate(job_id, deps, stop_at=0.0, tuning=FAST) == "continue"
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    assert sorted(invoker.crawled) == [BASE, BASE + "a"]


async def test_a_batch_that_crashes_the_crawler_fails_only_its_culprit(
    stores: LocalStores,
) -> None:
    links = tuple(BASE + name for name in "abcdef")
    invoker = ScriptedInvoker({BASE + "c": ["raise"] * 10}, {BASE: links})
    job_id, deps = run(stores, invoker, CrawlOptions(concurrency=8))
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    states = {i.url: i.state for i in stores.frontier.items(job_id)}
    assert [u for u, st in states.items() if st is UrlState.FAILED] == [BASE + "c"]
    assert all(states[u] is UrlState.DONE for u in links if u != BASE + "c")


class DelayedInvoker(ScriptedInvoker):
    """Each URL takes as long as ``delays`` says: fetches finish out of claim order."""

    def __init__(self, links: dict[str, tuple[str, ...]], delays: dict[str, float]):
        super().__init__({}, links)
        self.delays = delays

    async def crawl(self, request: CrawlRequest) -> CrawlResponse:
        await asyncio.sleep(max(self.delays.get(item.url, 0.0) for item in request.items))
        return CrawlResponse(
            request.job_id, tuple(self._outcome(request, item, "ok") for item in request.items)
        )


def _tree_site() -> dict[str, tuple[str, ...]]:
    """A start page linking 6 sections, each linking 3 pages of its own and a shared one."""
    links = {BASE: tuple(f"{BASE}s{i}/" for i in range(6))}
    for i in range(6):
        links[f"{BASE}s{i}/"] = (*(f"{BASE}s{i}/p{j}" for j in range(3)), f"{BASE}shared")
    return links


@pytest.mark.parametrize("slow", [(), ("s0", "s1"), ("s5",), ("s0", "s2", "s4")])
async def test_discovery_order_does_not_depend_on_which_fetch_finishes_first(
    tmp_path: Path, slow: tuple[str, ...]
) -> None:
    """A cache hit finishes at once, a network fetch later; a crawl resumed after a kill
    or run with a warm cache mixes them differently. The order numbers (and so the
    reading order) must be those of a crawl where nothing was slow."""
    links = _tree_site()
    orders = []
    for delays in ({}, {f"{BASE}{name}/": 0.2 for name in slow}):
        with open_local_stores(tmp_path / f"run{len(orders)}") as stores:
            job_id, deps = run(stores, DelayedInvoker(links, delays))
            await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST)
            orders.append([(i.order, i.url) for i in stores.frontier.items(job_id)])
    assert orders[0] == orders[1]


class HangingInvoker(ScriptedInvoker):
    """The start page answers; every other URL's crawl call never returns."""

    async def crawl(self, request: CrawlRequest) -> CrawlResponse:
        if request.items[0].depth > 0:
            await asyncio.Event().wait()
        return await super().crawl(request)


async def test_a_crawl_call_outliving_the_budget_is_cut_and_recorded(stores: LocalStores) -> None:
    """No request outlives the budget, even one the fetcher does not bound: its URLs fail
    with reason timeout (on main they held the job until they ended)."""
    invoker = HangingInvoker({}, {BASE: (BASE + "a", BASE + "b")})
    job_id, deps = run(stores, invoker, CrawlOptions(budget_s=0.3))
    tuning = Tuning(tick_s=0.01, budget_grace_s=0.1)
    outcome = await asyncio.wait_for(orchestrate(job_id, deps, float("inf"), tuning), 30)
    assert outcome == "finalize"
    reasons = {r.url: (r.status, r.reason) for r in stores.pages.list(job_id)}
    assert reasons == {
        BASE + "a": (PageStatus.FAILED, "timeout"),
        BASE + "b": (PageStatus.FAILED, "timeout"),
    }


class SitemapInvoker(ScriptedInvoker):
    """The start page's outcome also carries sitemap URLs as a sitemap spells them."""

    def __init__(self, sitemap: tuple[str, ...], links: dict[str, tuple[str, ...]]):
        super().__init__({}, links)
        self.sitemap = sitemap

    def _outcome(self, request, item, step):  # type: ignore[no-untyped-def]
        outcome = super()._outcome(request, item, step)
        if item.depth != 0:
            return outcome
        return CrawlOutcome(
            outcome.url_hash, outcome.state, page=outcome.page, links=outcome.links,
            sitemap=self.sitemap,
        )


async def test_sitemap_urls_are_normalised_and_outcome_links_taken_as_they_come(
    stores: LocalStores,
) -> None:
    # A sitemap is raw text: fragments, index.html, tracking parameters, upper-case hosts.
    # A crawl outcome's links are normalised by the crawler (CrawlOutcome.links).
    sitemap = ("HTTP://DOCS.TEST/s/index.html#top", "http://docs.test/t.html?utm_source=x")
    invoker = SitemapInvoker(sitemap, {BASE: (BASE + "a", BASE + "s/")})
    job_id, deps = run(stores, invoker)
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    urls = [i.url for i in stores.frontier.items(job_id)]
    assert urls == [BASE, BASE + "s/", BASE + "t.html", BASE + "a"]


class RecordingCrawler(ScriptedInvoker):
    """Every page comes with the record the crawler built from the cache
    (``CrawlOutcome.record``, AWS: adapters/aws/cachedpages.py)."""

    def __init__(self, links: dict[str, tuple[str, ...]]) -> None:
        super().__init__({}, links)
        self.batches: list[int] = []

    async def crawl(self, request: CrawlRequest) -> CrawlResponse:
        self.batches.append(len(request.items))
        return await super().crawl(request)

    def _outcome(self, request, item, step):  # type: ignore[no-untyped-def]
        outcome = super()._outcome(request, item, step)
        record = PageRecord(
            request.job_id, item.url, item.url_hash, PageStatus.OK, item.order, title="T",
            words=7, markdown_key="cache/markdown/x.json", from_cache=True,
        )
        return dataclasses.replace(outcome, record=record)


async def test_a_page_the_crawler_brought_the_record_of_is_recorded_without_the_process_step(
    stores: LocalStores,
) -> None:
    invoker = RecordingCrawler({BASE: (BASE + "a",)})
    job_id, deps = run(stores, invoker)
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    assert invoker.processed == []
    records = stores.pages.list(job_id)
    assert [(r.url, r.title, r.words) for r in records] == [(BASE, "T", 7), (BASE + "a", "T", 7)]
    counters = stores.jobs.get(job_id).counters
    assert (counters.crawled, counters.processed, counters.words) == (2, 2, 14)
    done = [e.data["url"] for e in stores.events.after(job_id, 0, 100) if e.type == EventType.PAGE_DONE]
    assert done == [BASE, BASE + "a"]


async def test_batch_per_slot_sets_the_urls_per_crawl_call(stores: LocalStores) -> None:
    links = {BASE: tuple(f"{BASE}{i}" for i in range(12))}
    options = CrawlOptions(concurrency=4)
    for share, largest in ((0.5, 2), (1.0, 4)):
        invoker = RecordingCrawler(links)
        job_id, deps = run(stores, invoker, options)
        tuning = Tuning(tick_s=0.01, batch_per_slot=share)
        assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=tuning) == "finalize"
        assert max(invoker.batches) == largest and sum(invoker.batches) == 13


async def test_a_batch_of_outcomes_writes_its_counters_once(stores: LocalStores) -> None:
    """Each outcome's bumps (crawled, discovered, skipped) are summed over its batch and
    written once, with the same totals as one write per bump."""
    links = {BASE: tuple(f"{BASE}p{i}" for i in range(12))}
    invoker = ScriptedInvoker({f"{BASE}p3": ["skip"]}, links)
    job_id, deps = run(stores, invoker, dataclasses.replace(DEFAULTS, concurrency=8))
    writes: list[dict[str, int]] = []
    add_counters = stores.jobs.add_counters

    def counted(job: str, **deltas: int):  # type: ignore[no-untyped-def]
        writes.append(deltas)
        return add_counters(job, **deltas)

    stores.jobs.add_counters = counted  # type: ignore[method-assign]
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    c = stores.jobs.get(job_id).counters
    assert (c.discovered, c.crawled, c.skipped) == (13, 12, 1)
    # 13 URLs, 25 bumps one by one; batches of 4 (concurrency 8 x 0.5): a handful of writes
    assert len(writes) <= 6
    assert any(len(deltas) > 1 for deltas in writes)


def _transactions(stores: LocalStores) -> list[list[str]]:
    """The statements of each write transaction on the stores' connection from now on."""
    found: list[list[str]] = []

    def traced(sql: str) -> None:
        if sql.startswith("BEGIN"):
            found.append([])
        elif found and not sql.startswith("COMMIT"):
            found[-1].append(sql)

    with stores.db.write() as conn:
        conn.set_trace_callback(traced)
    return found


async def test_a_batch_of_outcomes_and_the_claim_after_it_are_one_transaction(
    stores: LocalStores,
) -> None:
    links = {BASE: tuple(f"{BASE}p{i}" for i in range(12)), f"{BASE}p0": (f"{BASE}q",)}
    invoker = ScriptedInvoker({}, links)
    job_id, deps = run(stores, invoker, dataclasses.replace(DEFAULTS, concurrency=8))
    deps = dataclasses.replace(deps, batch=stores.db.batch)
    transactions = _transactions(stores)
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    assert sorted(invoker.crawled) == sorted([BASE, *links[BASE], f"{BASE}q"])

    def has(tx: list[str], text: str) -> bool:
        return any(text in sql for sql in tx)

    leasing = [tx for tx in transactions if has(tx, "SET state = 'leased'")]
    # The start URL's claim comes first, alone; every later claim shares the transaction
    # of the outcomes that made room for it (the start page's links, then p0's link).
    assert len(leasing) >= 3 and not has(leasing[0], "SET state = 'done'")
    assert all(has(tx, "SET state = 'done'") for tx in leasing[1:])
    applying = [tx for tx in transactions if has(tx, "SET state = 'done'")]
    assert len(applying) < len([BASE, *links[BASE], f"{BASE}q"])  # batches, not pages


def _break_the_next_add(stores: LocalStores) -> None:
    """The frontier's next ``add`` fails (once), in the middle of applying an outcome."""
    add = stores.frontier.add

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        stores.frontier.add = add  # type: ignore[method-assign]
        raise RuntimeError("crashed while adding the start page's links")

    stores.frontier.add = broken  # type: ignore[method-assign]


async def _crawl_to_the_end(stores: LocalStores, crash: bool) -> tuple[object, ...]:
    links = {BASE: (BASE + "a", BASE + "b"), BASE + "a": (BASE + "c",)}
    invoker = ScriptedInvoker({BASE + "b": ["skip"]}, links)
    job_id, deps = run(stores, invoker)
    deps = dataclasses.replace(deps, batch=stores.db.batch)
    if crash:
        _break_the_next_add(stores)
        with pytest.raises(RuntimeError):
            await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST)
        # The start page's outcome was half applied when it failed: none of it was kept.
        [start] = stores.frontier.items(job_id)
        assert start.state is UrlState.LEASED
        assert stores.jobs.get(job_id).counters.crawled == 0
        resume_job(job_id, JobDeps(stores.jobs, stores.frontier, stores.events, stores.clock))
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    items = [(i.url, i.order, i.state, i.depth) for i in stores.frontier.items(job_id)]
    c = stores.jobs.get(job_id).counters
    pages = [(p.url, p.status, p.order) for p in stores.pages.list(job_id)]
    return items, c.discovered, c.crawled, c.skipped, pages


async def test_a_batch_that_fails_half_way_leaves_nothing_and_a_resume_ends_the_same(
    tmp_path: Path,
) -> None:
    """All of a batch or none of it: an error in the middle of applying an outcome (or a
    kill) leaves the state of the last commit, and a resumed run ends as an
    uninterrupted one does."""
    with open_local_stores(tmp_path / "whole") as stores:
        uninterrupted = await _crawl_to_the_end(stores, crash=False)
    with open_local_stores(tmp_path / "crashed") as stores:
        assert await _crawl_to_the_end(stores, crash=True) == uninterrupted


async def test_urls_past_the_cap_found_by_a_killed_run_still_count(stores: LocalStores) -> None:
    """A run killed after its first page's outcome (the URLs it found past the cap held
    only in its memory, they were lost), then resumed: what is left is counted as by a
    run that went through. The start page links p0..p9 past the cap, a and b link q0..q4;
    the resumed run sees only the q's again."""
    past = tuple(f"{BASE}p{i}" for i in range(10))
    later = tuple(f"{BASE}q{i}" for i in range(5))
    links = {BASE: (BASE + "a", BASE + "b", *past), BASE + "a": later, BASE + "b": later}
    invoker = ScriptedInvoker({}, links)
    job_id, deps = run(stores, invoker, CrawlOptions(max_pages=3))
    tuning = Tuning(tick_s=0.01, lease_s=0.05)
    second_call = asyncio.Event()
    invoker.on_crawl = lambda: second_call.set() if invoker.crawled else None
    first = asyncio.ensure_future(orchestrate(job_id, deps, stop_at=float("inf"), tuning=tuning))
    await second_call.wait()  # the start page's outcome is applied: a and b are claimed
    first.cancel()  # the run dies with its crawl calls
    with pytest.raises(asyncio.CancelledError):
        await first
    invoker.on_crawl = lambda: None
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=tuning) == "finalize"
    job = stores.jobs.get(job_id)
    assert (job.counters.discovered, job.truncated, job.left) == (3, True, 15)


async def test_urls_past_the_cap_are_remembered_up_to_a_bound(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile page may link to a hundred thousand URLs past the cap, every page to
    others: the job remembers (and ``left`` counts) at most ``MAX_OVERFLOW`` of them,
    a resumed run only what room the runs before it left."""
    from mdcrawl.pipeline import outcomes

    monkeypatch.setattr(outcomes, "MAX_OVERFLOW", 4)
    links = {BASE: tuple(f"{BASE}p{i}" for i in range(10)), f"{BASE}p0": (f"{BASE}q",)}
    job_id, deps = run(stores, ScriptedInvoker({}, links), CrawlOptions(max_pages=4))
    stores.frontier.note_overflow(job_id, ["noted-by-an-earlier-run"])
    assert await orchestrate(job_id, deps, stop_at=float("inf"), tuning=FAST) == "finalize"
    job = stores.jobs.get(job_id)
    assert (job.truncated, job.left) == (True, 4)
    assert stores.frontier.overflow(job_id) == 4
