"""The crawl step over real local stores and a scripted fetcher."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from mdcrawl import errors
from mdcrawl.adapters.local import LocalStores, open_local_stores
from mdcrawl.models import CrawlOptions, FetchResult, FrontierItem, UrlState
from mdcrawl.pipeline.crawl import CrawlDeps, crawl_batch
from mdcrawl.ports import CrawlRequest
from mdcrawl.urls import scope_for, url_hash

BASE = "http://docs.test/"
DEFAULTS = CrawlOptions()
PAGE = b"<html><body><a href='/b.html'>b</a><a href='https://else.test/'>x</a></body></html>"


class ScriptedFetcher:
    """Answers from a script: url -> FetchResult or exception; records every call."""

    def __init__(
        self, script: dict[str, FetchResult | Exception], disallow: frozenset[str] = frozenset()
    ):
        self.script, self.disallow = script, disallow
        self.calls: list[tuple[str, str | None]] = []

    async def fetch(self, url: str, etag: str | None = None, last_modified: str | None = None):
        self.calls.append((url, etag))
        answer = self.script[url]
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def allowed(self, url: str) -> bool:
        return url not in self.disallow

    async def sitemap_urls(self, start_url: str) -> list[str]:
        return [BASE + "from-sitemap.html"]


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.t = now

    def now(self) -> float:
        return self.t


@pytest.fixture
def stores(tmp_path: Path):
    with open_local_stores(tmp_path) as opened:
        yield opened


def ok(url: str, body: bytes = PAGE, **headers: str) -> FetchResult:
    return FetchResult(url, url, 200, {"content-type": "text/html", **headers}, body)


def request(
    *urls: str, options: CrawlOptions = DEFAULTS, depth: int = 1, exclude: tuple[str, ...] = ()
) -> CrawlRequest:
    items = tuple(FrontierItem(u, url_hash(u), depth=depth, order=i) for i, u in enumerate(urls))
    return CrawlRequest("job", scope_for(BASE, exclude=exclude), options, items)


def deps(stores: LocalStores, fetcher: ScriptedFetcher, clock: Clock) -> CrawlDeps:
    return CrawlDeps(fetcher, stores.cache, stores.blobs, clock)


async def test_each_failure_has_its_state_and_the_batch_goes_on(stores: LocalStores) -> None:
    fetcher = ScriptedFetcher(
        {
            BASE + "a.html": ok(BASE + "a.html"),
            BASE + "pdf": errors.NotHtml("pdf"),
            BASE + "gone": errors.HttpStatusError("404", 404),
            BASE + "busy": errors.HttpStatusError("503", 503),
            BASE + "down": errors.FetchError("refused"),
        },
        disallow={BASE + "private"},
    )
    urls = [BASE + p for p in ("a.html", "pdf", "gone", "busy", "down", "private")]
    response = await crawl_batch(request(*urls), deps(stores, fetcher, Clock()))
    got = {o.url_hash: (o.state, o.reason) for o in response.outcomes}
    assert [got[url_hash(u)] for u in urls] == [
        (UrlState.DONE, None),
        (UrlState.SKIPPED, "not_html"),
        (UrlState.FAILED, "http_404"),
        (UrlState.PENDING, "http_503"),
        (UrlState.PENDING, "fetch_error"),
        (UrlState.SKIPPED, "robots_disallowed"),
    ]
    assert BASE + "private" not in [url for url, _ in fetcher.calls]
    done = response.outcomes[0]
    assert done.links == (BASE + "b.html", "https://else.test/")
    assert stores.blobs.get(done.page.body_key) == PAGE


async def test_fresh_cache_skips_the_network_and_stale_revalidates(stores: LocalStores) -> None:
    url, clock = BASE + "a.html", Clock()
    fetcher = ScriptedFetcher({url: ok(url, etag='"v1"', **{"cache-control": "max-age=60"})})
    await crawl_batch(request(url), deps(stores, fetcher, clock))
    clock.t += 30
    cached = await crawl_batch(request(url), deps(stores, fetcher, clock))
    assert len(fetcher.calls) == 1 and cached.outcomes[0].page.from_cache
    clock.t += 60  # past max-age: a conditional GET, answered 304
    fetcher.script[url] = FetchResult(
        url, url, 304, {"etag": '"v1"', "cache-control": "max-age=60"}
    )
    revalidated = await crawl_batch(request(url), deps(stores, fetcher, clock))
    assert fetcher.calls[-1] == (url, '"v1"')
    outcome = revalidated.outcomes[0]
    assert outcome.state is UrlState.DONE and outcome.page.from_cache
    assert outcome.links == (BASE + "b.html", "https://else.test/")
    assert stores.cache.get(url_hash(url)).fresh_until == clock.t + 60


async def test_max_age_option_caps_freshness(stores: LocalStores) -> None:
    url, clock = BASE + "a.html", Clock()
    fetcher = ScriptedFetcher({url: ok(url, etag='"v1"')})
    await crawl_batch(request(url), deps(stores, fetcher, clock))
    clock.t += 1
    await crawl_batch(request(url, options=CrawlOptions(max_age_s=0)), deps(stores, fetcher, clock))
    assert fetcher.calls == [(url, None), (url, '"v1"')]


async def test_a_gone_answer_is_cached_for_the_max_age_with_its_reason(
    stores: LocalStores,
) -> None:
    """A 404 is not asked again by a re-crawl within the max age (RFC 9111: cacheable
    by default), and the URL ends with the same state, reason and detail from the cache."""
    url, clock = BASE + "gone.html", Clock()
    fetcher = ScriptedFetcher({url: errors.HttpStatusError(f"{url}: HTTP 404 Gone Fishing", 404)})

    async def outcome(options: CrawlOptions = DEFAULTS):
        [only] = (await crawl_batch(request(url, options=options), deps(stores, fetcher, clock))).outcomes
        return (only.state, only.reason, only.detail)

    first = await outcome()
    assert first == (UrlState.FAILED, "http_404", f"{url}: HTTP 404 Gone Fishing")
    clock.t += 60
    assert await outcome() == first and len(fetcher.calls) == 1
    assert await outcome(CrawlOptions(use_cache=False)) == first and len(fetcher.calls) == 2
    clock.t += DEFAULTS.max_age_s  # past the max age: asked again, and now it is back
    fetcher.script[url] = ok(url)
    assert (await outcome())[0] is UrlState.DONE and len(fetcher.calls) == 3
    assert stores.cache.get(url_hash(url)).status == 200


async def test_only_gone_answers_are_cached(stores: LocalStores) -> None:
    """A 403 or a 503 may be the client's or the moment's: always asked again."""
    forbidden, busy, clock = BASE + "private.html", BASE + "busy.html", Clock()
    fetcher = ScriptedFetcher({
        forbidden: errors.HttpStatusError("403", 403), busy: errors.HttpStatusError("503", 503)
    })
    for _ in range(2):
        await crawl_batch(request(forbidden, busy), deps(stores, fetcher, clock))
    assert len(fetcher.calls) == 4
    assert stores.cache.get(url_hash(forbidden)) is None


async def test_start_url_brings_sitemap_urls(stores: LocalStores) -> None:
    fetcher = ScriptedFetcher({BASE: ok(BASE)})
    response = await crawl_batch(request(BASE, depth=0), deps(stores, fetcher, Clock()))
    assert response.outcomes[0].sitemap == (BASE + "from-sitemap.html",)


class SitemapFirstFetcher(ScriptedFetcher):
    """Holds the start page's answer until the sitemap is asked for (at most
    ``patience`` seconds): ``sitemap_asked_meanwhile`` says whether it was."""

    def __init__(
        self,
        script: dict[str, FetchResult | Exception],
        patience: float = 2.0,
        sitemap_takes: float = 0.0,
    ):
        super().__init__(script)
        self.patience, self.sitemap_takes = patience, sitemap_takes
        self.sitemap_asked = asyncio.Event()
        self.sitemap_asked_meanwhile = False

    async def fetch(self, url: str, etag: str | None = None, last_modified: str | None = None):
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.sitemap_asked.wait(), self.patience)
        self.sitemap_asked_meanwhile = self.sitemap_asked.is_set()
        return await super().fetch(url, etag, last_modified)

    async def sitemap_urls(self, start_url: str) -> list[str]:
        self.sitemap_asked.set()
        await asyncio.sleep(self.sitemap_takes)
        return await super().sitemap_urls(start_url)


async def test_the_sitemap_is_read_while_the_start_page_is_fetched(stores: LocalStores) -> None:
    """Not after it: the crawl's first links wait for both (a round trip or more saved)."""
    fetcher = SitemapFirstFetcher({BASE: ok(BASE)})
    response = await crawl_batch(request(BASE, depth=0), deps(stores, fetcher, Clock()))
    assert fetcher.sitemap_asked_meanwhile
    [outcome] = response.outcomes
    assert outcome.state is UrlState.DONE
    assert outcome.sitemap == (BASE + "from-sitemap.html",)
    assert BASE + "b.html" in outcome.links


async def test_a_start_page_that_fails_brings_no_sitemap_and_leaves_no_read_running(
    stores: LocalStores,
) -> None:
    fetcher = SitemapFirstFetcher({BASE: errors.HttpStatusError("404", 404)}, 0.5, 60.0)
    response = await crawl_batch(request(BASE, depth=0), deps(stores, fetcher, Clock()))
    [outcome] = response.outcomes
    assert (outcome.state, outcome.reason, outcome.sitemap) == (UrlState.FAILED, "http_404", ())
    running = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not running


async def judged_by_thread(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch, exclude: tuple[str, ...]
) -> tuple[list[int], int]:
    """The threads the crawl step judged links on (a fetch, then a fresh cache hit), and
    how many links the page has."""
    import threading

    from mdcrawl.pipeline import fetching

    judged: list[int] = []

    def recording(url: str, scope: object) -> bool:
        judged.append(threading.get_ident())
        return True

    monkeypatch.setattr(fetching, "in_scope", recording)
    fetcher = ScriptedFetcher({BASE + "a.html": ok(BASE + "a.html")})
    clock = Clock()
    for _ in range(2):  # fetched, then a fresh cache hit
        batch = request(BASE + "a.html", exclude=exclude)
        [outcome] = (await crawl_batch(batch, deps(stores, fetcher, clock))).outcomes
        assert outcome.state is UrlState.DONE
    assert len(fetcher.calls) == 1
    return judged, len(outcome.links)


async def test_links_are_judged_off_the_event_loop(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scope globs are matched in a worker thread, fetched or from the cache: in
    `mdcrawl serve` the event loop answers the API (issue 9: a glob froze it)."""
    import threading

    judged, links = await judged_by_thread(stores, monkeypatch, exclude=("/private/**",))
    assert len(judged) == 2 * links
    assert threading.get_ident() not in judged


async def test_without_globs_no_thread_judges_links(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prefix check costs less than the hop to a thread: the orchestrator does it. (The
    fetch read here parses the page in a thread, and judges its links there anyway.)"""
    judged, links = await judged_by_thread(stores, monkeypatch, exclude=())
    assert len(judged) == links  # the fetch's parse only: the cache hit judged none


def test_rate_limited_and_out_of_time_are_final() -> None:
    from mdcrawl.pipeline.crawl import failure_outcome

    item = FrontierItem(BASE, url_hash(BASE))
    for error, reason in (
        (errors.RateLimited("x"), "rate_limited"),
        (errors.OutOfTime("y"), "timeout"),
    ):
        outcome = failure_outcome(item, error)
        assert (outcome.state, outcome.reason) == (UrlState.FAILED, reason)
    assert failure_outcome(item, errors.FetchTimeout("z")).state is UrlState.PENDING
