"""HttpxFetcher against a real HTTP server on 127.0.0.1 (tests/support/server.py)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

import pytest
from mdcrawl.errors import (
    FetchError,
    HttpStatusError,
    NotHtml,
    OutOfScope,
    RobotsDisallowed,
    TooLarge,
    TooManyRedirects,
    UnsafeUrl,
)
from mdcrawl.fetch import FetchTimeout, HttpxFetcher
from mdcrawl.models import CrawlOptions
from mdcrawl.netguard import AddressGuard, GuardedNetworkBackend
from mdcrawl.urls import scope_for

from tests.support.server import RunningServer, http_date, serve_directory
from tests.support.sites import require_site

FAST = CrawlOptions(timeout_s=5.0, retries=2, concurrency=4)
PAGE = b"<!doctype html><html><head><title>t</title></head><body><p>hi</p></body></html>"


def respond(
    handler: SimpleHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes = b""
) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    with contextlib.suppress(OSError):  # the fetcher hangs up early on purpose (not HTML...)
        handler.wfile.write(body)


def html_route(body: bytes = PAGE, content_type: str = "text/html; charset=utf-8"):
    return lambda h: respond(h, 200, {"Content-Type": content_type}, body)


def redirect_route(location: str, status: int = 301):
    return lambda h: respond(h, status, {"Location": location, "Content-Length": "0"})


def flaky_route(failures: list[tuple[int, dict[str, str]]]):
    """Answers the queued failures first, then a page."""

    def route(handler: SimpleHTTPRequestHandler) -> None:
        if failures:
            status, headers = failures.pop(0)
            respond(handler, status, {"Content-Length": "0", **headers})
        else:
            html_route()(handler)

    return route


@pytest.fixture
def site(tmp_path: Path) -> Path:
    for i in range(30):
        (tmp_path / f"p{i}.html").write_bytes(PAGE.replace(b"hi", b"page %d" % i))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.html").write_bytes(PAGE)
    return tmp_path


@pytest.fixture
def server(site: Path) -> Iterator[RunningServer]:
    with serve_directory(site) as running:
        yield running


def allow_loopback() -> AddressGuard:
    return AddressGuard(allow_networks=("127.0.0.0/8",))


async def test_fetches_html_with_headers_and_charset(server: RunningServer) -> None:
    server.routes["/latin"] = html_route(b"<html>caf\xe9</html>", "text/html; charset=ISO-8859-1")
    async with HttpxFetcher(FAST) as fetcher:
        result = await fetcher.fetch(server.url("/latin"))
    assert result.status == 200
    assert result.body == b"<html>caf\xe9</html>"
    assert result.encoding is not None and result.encoding.lower() == "iso-8859-1"
    assert result.content_type == "text/html"
    assert result.final_url == server.url("/latin")
    request = [r for r in server.stats.requests if r.path == "/latin"][0]
    assert request.headers["user-agent"].startswith("mdcrawl")


async def test_per_host_concurrency_is_never_exceeded(site: Path) -> None:
    options = replace(FAST, concurrency=3)
    with serve_directory(site, latency=0.05) as server:
        async with HttpxFetcher(options) as fetcher:
            pages = [fetcher.fetch(server.url(f"/p{i}.html")) for i in range(30)]
            results = await asyncio.gather(fetcher.sitemap_urls(server.url("/")), *pages)
        assert [r.status for r in results[1:]] == [200] * 30
        assert 2 <= server.stats.max_in_flight <= 3
        assert "/robots.txt" in server.stats.paths()


async def test_redirect_is_followed_and_final_url_reported(server: RunningServer) -> None:
    server.routes["/docs/old"] = redirect_route("/docs/a.html")
    scope = scope_for(server.url("/docs/"))
    async with HttpxFetcher(FAST, scope=scope) as fetcher:
        result = await fetcher.fetch(server.url("/docs/old"))
    assert result.url == server.url("/docs/old")
    assert result.final_url == server.url("/docs/a.html")
    assert result.body == PAGE


async def test_redirect_loop_is_detected(server: RunningServer) -> None:
    server.routes["/a"] = redirect_route("/b", 302)
    server.routes["/b"] = redirect_route("/a", 307)
    async with HttpxFetcher(FAST) as fetcher:
        with pytest.raises(TooManyRedirects, match="loop"):
            await fetcher.fetch(server.url("/a"))
    assert server.stats.paths().count("/a") == 1


async def test_redirect_cap(server: RunningServer) -> None:
    for i in range(10):
        server.routes[f"/hop{i}"] = redirect_route(f"/hop{i + 1}")
    async with HttpxFetcher(replace(FAST, max_redirects=3)) as fetcher:
        with pytest.raises(TooManyRedirects, match="more than 3"):
            await fetcher.fetch(server.url("/hop0"))
    hops = [p for p in server.stats.paths() if p.startswith("/hop")]
    assert hops == [f"/hop{i}" for i in range(4)]


async def test_redirect_out_of_scope(server: RunningServer) -> None:
    server.routes["/docs/moved"] = redirect_route("/p1.html")
    async with HttpxFetcher(FAST, scope=scope_for(server.url("/docs/"))) as fetcher:
        with pytest.raises(OutOfScope):
            await fetcher.fetch(server.url("/docs/moved"))
    assert "/p1.html" not in server.stats.paths()


async def test_huge_page_is_refused_without_reading_it(server: RunningServer) -> None:
    total = 50 * 1024 * 1024
    sent = {"bytes": 0}
    finished = threading.Event()

    def huge(handler: SimpleHTTPRequestHandler) -> None:
        chunk = b"<p>" + b"x" * (64 * 1024 - 3)
        try:
            respond(handler, 200, {"Content-Type": "text/html"})
            while sent["bytes"] < total:
                handler.wfile.write(chunk)
                sent["bytes"] += len(chunk)
        except OSError:
            pass  # the client hung up: what the test wants
        finally:
            finished.set()

    server.routes["/huge"] = huge
    options = replace(FAST, max_page_bytes=1024 * 1024)
    async with HttpxFetcher(options) as fetcher:
        with pytest.raises(TooLarge):
            await fetcher.fetch(server.url("/huge"))
    assert finished.wait(10)
    assert sent["bytes"] < total // 4  # socket buffers hold a few MB at most


async def test_huge_content_length_is_refused_from_the_header(server: RunningServer) -> None:
    announced_size = 50 * 1024 * 1024

    def announced(handler: SimpleHTTPRequestHandler) -> None:
        headers = {"Content-Type": "text/html", "Content-Length": str(announced_size)}
        respond(handler, 200, headers, b"<html>" + b"x" * (4 * 1024 * 1024))

    server.routes["/announced"] = announced
    async with HttpxFetcher(replace(FAST, max_page_bytes=1024 * 1024)) as fetcher:
        with pytest.raises(TooLarge, match="announced"):
            await fetcher.fetch(server.url("/announced"))


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/pdf", b"%PDF-1.7" + b"\0" * 200_000),
        ("image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 1000),
        ("application/json", b'{"a": 1}'),
        ("", b"\x89PNG\r\n\x1a\n" + b"\0" * 5000),  # no content type: sniffed
    ],
)
async def test_non_html_is_refused(server: RunningServer, content_type: str, body: bytes) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    server.routes["/file"] = lambda h: respond(h, 200, headers, body)
    async with HttpxFetcher(FAST) as fetcher:
        with pytest.raises(NotHtml):
            await fetcher.fetch(server.url("/file"))


async def test_html_without_content_type_is_sniffed(server: RunningServer) -> None:
    server.routes["/bare"] = lambda h: respond(h, 200, {}, b"\n  " + PAGE)
    async with HttpxFetcher(FAST) as fetcher:
        assert (await fetcher.fetch(server.url("/bare"))).body.strip() == PAGE


async def test_429_with_retry_after_then_success(server: RunningServer) -> None:
    server.routes["/busy"] = flaky_route([(429, {"Retry-After": "1"})])
    async with HttpxFetcher(FAST) as fetcher:
        result = await fetcher.fetch(server.url("/busy"))
    assert result.status == 200
    assert server.stats.paths().count("/busy") == 2


async def test_retry_after_as_http_date(server: RunningServer) -> None:
    server.routes["/busy"] = flaky_route([(503, {"Retry-After": http_date(0)})])
    async with HttpxFetcher(FAST) as fetcher:
        assert (await fetcher.fetch(server.url("/busy"))).status == 200


async def test_503_then_success(server: RunningServer) -> None:
    server.routes["/flaky"] = flaky_route([(503, {}), (502, {})])
    async with HttpxFetcher(FAST) as fetcher:
        assert (await fetcher.fetch(server.url("/flaky"))).status == 200
    assert server.stats.paths().count("/flaky") == 3


async def test_persistent_5xx_gives_up_after_retries(server: RunningServer) -> None:
    server.routes["/down"] = lambda h: respond(h, 500, {"Content-Length": "0"})
    async with HttpxFetcher(replace(FAST, retries=1)) as fetcher:
        with pytest.raises(HttpStatusError) as caught:
            await fetcher.fetch(server.url("/down"))
    assert caught.value.status == 500
    assert server.stats.paths().count("/down") == 2


async def test_404_is_not_retried(server: RunningServer) -> None:
    async with HttpxFetcher(FAST) as fetcher:
        with pytest.raises(HttpStatusError) as caught:
            await fetcher.fetch(server.url("/missing.html"))
    assert caught.value.status == 404
    assert server.stats.paths().count("/missing.html") == 1


async def test_timeout_then_fetch_error(server: RunningServer) -> None:
    release = threading.Event()
    server.routes["/slow"] = lambda h: (release.wait(5), html_route()(h))
    options = replace(FAST, timeout_s=0.3, retries=1)
    try:
        async with HttpxFetcher(options) as fetcher:
            with pytest.raises(FetchTimeout) as caught:
                await fetcher.fetch(server.url("/slow"))
    finally:
        release.set()
    assert isinstance(caught.value, FetchError) and caught.value.reason == "timeout"
    assert server.stats.paths().count("/slow") == 2


async def test_conditional_get_returns_304(server: RunningServer) -> None:
    async with HttpxFetcher(FAST) as fetcher:
        first = await fetcher.fetch(server.url("/p3.html"))
        etag = first.headers["etag"]
        again = await fetcher.fetch(server.url("/p3.html"), etag=etag, last_modified=http_date(0))
    assert first.status == 200 and first.body
    assert again.status == 304 and again.body == b""
    last = [r for r in server.stats.requests if r.path == "/p3.html"][-1]
    assert last.headers["if-none-match"] == etag
    assert "if-modified-since" in last.headers


async def test_robots_disallow_is_honoured_and_fetched_once(server: RunningServer) -> None:
    robots = b"User-agent: *\nDisallow: /docs/\n\nUser-agent: mdcrawl\nDisallow: /p1.html\n"
    server.routes["/robots.txt"] = lambda h: respond(h, 200, {"Content-Type": "text/plain"}, robots)
    async with HttpxFetcher(FAST) as fetcher:
        assert not await fetcher.allowed(server.url("/p1.html"))
        assert await fetcher.allowed(server.url("/p2.html"))
        assert await fetcher.allowed(server.url("/docs/a.html"))  # the mdcrawl group wins
        with pytest.raises(RobotsDisallowed):
            await fetcher.fetch(server.url("/p1.html"))
        await fetcher.fetch(server.url("/p2.html"))
    assert server.stats.paths().count("/robots.txt") == 1
    assert "/p1.html" not in server.stats.paths()


async def test_robots_is_fetched_once_by_requests_that_start_together(
    server: RunningServer,
) -> None:
    """The first requests to an origin wait on one robots.txt fetch; later ones read the
    parsed file without the lock."""
    robots = b"User-agent: *\nDisallow: /private/\n"
    server.routes["/robots.txt"] = lambda h: respond(h, 200, {"Content-Type": "text/plain"}, robots)
    async with HttpxFetcher(FAST) as fetcher:
        paths = ["/p1.html", "/private/x.html"] * 4
        answers = await asyncio.gather(*(fetcher.allowed(server.url(p)) for p in paths))
        assert answers == [True, False] * 4
        assert not await fetcher.allowed(server.url("/private/y.html"))
    assert server.stats.paths().count("/robots.txt") == 1


async def test_robots_ignored_when_asked(server: RunningServer) -> None:
    server.routes["/robots.txt"] = lambda h: respond(h, 200, {}, b"User-agent: *\nDisallow: /\n")
    async with HttpxFetcher(replace(FAST, respect_robots=False)) as fetcher:
        assert await fetcher.allowed(server.url("/p1.html"))
        assert (await fetcher.fetch(server.url("/p1.html"))).status == 200
    assert "/robots.txt" not in server.stats.paths()


async def test_robots_errors_allow_everything(server: RunningServer) -> None:
    server.routes["/robots.txt"] = lambda h: respond(h, 503, {"Content-Length": "0"})
    async with HttpxFetcher(FAST) as fetcher:
        assert await fetcher.allowed(server.url("/p1.html"))


async def test_sitemap_discovery(server: RunningServer) -> None:
    base = server.base_url
    index = (
        f"<sitemapindex><sitemap><loc>{base}/maps/a.xml.gz</loc></sitemap>"
        f"<sitemap><loc>{base}/maps/missing.xml</loc></sitemap></sitemapindex>"
    ).encode()
    child = gzip.compress(
        f"<urlset><url><loc>{base}/p1.html</loc></url><url><loc>{base}/p2.html</loc></url>"
        "<url><loc>mailto:x@y.z</loc></url></urlset>".encode()
    )
    root_map = f"<urlset><url><loc>{base}/p3.html</loc></url></urlset>".encode()
    robots = f"User-agent: *\nAllow: /\nSitemap: {base}/maps/index.xml\n".encode()
    server.routes.update(
        {
            "/robots.txt": lambda h: respond(h, 200, {"Content-Type": "text/plain"}, robots),
            "/maps/index.xml": lambda h: respond(
                h, 200, {"Content-Type": "application/xml"}, index
            ),
            "/maps/a.xml.gz": lambda h: respond(
                h, 200, {"Content-Type": "application/gzip"}, child
            ),
            "/sitemap.xml": lambda h: respond(h, 200, {"Content-Type": "text/xml"}, root_map),
        }
    )
    async with HttpxFetcher(FAST) as fetcher:
        urls = await fetcher.sitemap_urls(server.url("/docs/a.html"))
    assert urls == [f"{base}/p1.html", f"{base}/p2.html", f"{base}/p3.html"]
    assert "/docs/sitemap.xml" in server.stats.paths()  # the prefix's own sitemap was tried


async def test_no_sitemap_means_no_urls(server: RunningServer) -> None:
    async with HttpxFetcher(FAST) as fetcher:
        assert await fetcher.sitemap_urls(server.url("/")) == []


class DictSitemapCache:
    """``fetch.SitemapCache`` in a dict."""

    def __init__(self) -> None:
        self.seeds: dict[str, list[str]] = {}

    def get(self, start_url: str) -> list[str] | None:
        return self.seeds.get(start_url)

    def put(self, start_url: str, urls: list[str]) -> None:
        self.seeds[start_url] = urls


async def test_sitemap_seeds_are_kept_and_answered_from_the_cache(server: RunningServer) -> None:
    base, cache = server.base_url, DictSitemapCache()
    root_map = f"<urlset><url><loc>{base}/p3.html</loc></url></urlset>".encode()
    server.routes["/sitemap.xml"] = lambda h: respond(h, 200, {"Content-Type": "text/xml"}, root_map)
    async with HttpxFetcher(FAST, sitemap_cache=cache) as fetcher:
        assert await fetcher.sitemap_urls(server.url("/")) == [f"{base}/p3.html"]
    assert cache.seeds == {f"{base}/": [f"{base}/p3.html"]}
    server.routes.pop("/sitemap.xml")
    server.stats.reset()
    async with HttpxFetcher(FAST, sitemap_cache=cache) as fetcher:
        assert await fetcher.sitemap_urls(server.url("/")) == [f"{base}/p3.html"]
    assert "/sitemap.xml" not in server.stats.paths()


@pytest.mark.parametrize(("status", "kept"), [(404, True), (410, True), (503, False), (429, False)])
async def test_only_a_settled_sitemap_answer_is_kept(
    server: RunningServer, status: int, kept: bool
) -> None:
    cache = DictSitemapCache()
    server.routes["/sitemap.xml"] = lambda h: respond(h, status, {"Content-Length": "0"})
    options = replace(FAST, retries=0)
    async with HttpxFetcher(options, sitemap_cache=cache) as fetcher:
        assert await fetcher.sitemap_urls(server.url("/")) == []
    # a 404 means no sitemap for good (asked again only when the note is stale); a 503 or
    # a 429 may pass: the next crawl asks again
    assert (f"{server.base_url}/" in cache.seeds) is kept


async def test_guard_blocks_loopback_unless_allowed(server: RunningServer) -> None:
    async with HttpxFetcher(FAST, guard=AddressGuard()) as fetcher:
        with pytest.raises(UnsafeUrl):
            await fetcher.fetch(server.url("/p1.html"))
    assert server.stats.requests == []
    async with HttpxFetcher(FAST, guard=allow_loopback()) as fetcher:
        assert (await fetcher.fetch(server.url("/p1.html"))).status == 200


async def test_guard_blocks_a_redirect_to_a_private_address(server: RunningServer) -> None:
    server.routes["/go"] = redirect_route("http://10.0.0.1/admin")
    server.routes["/meta"] = redirect_route("http://169.254.169.254/latest/meta-data/")
    async with HttpxFetcher(FAST, guard=allow_loopback()) as fetcher:
        for path in ("/go", "/meta"):
            with pytest.raises(UnsafeUrl) as caught:
                await fetcher.fetch(server.url(path))
            assert isinstance(caught.value, FetchError)  # a crawl skips it like any failure


async def test_guarded_backend_checks_the_address_it_connects_to(server: RunningServer) -> None:
    port = int(server.base_url.rsplit(":", 1)[1])
    with pytest.raises(UnsafeUrl):
        await GuardedNetworkBackend(AddressGuard()).connect_tcp("localhost", port)
    stream = await GuardedNetworkBackend(allow_loopback()).connect_tcp("127.0.0.1", port)
    await stream.aclose()


async def test_a_cookie_the_site_sets_is_sent_back(server: RunningServer) -> None:
    """Answers without Set-Cookie skip the cookie jar (fetch._Cookies); one with it
    still fills it, and later requests to the site carry the cookie."""
    headers = {"Content-Type": "text/html", "Set-Cookie": "seen=1; Path=/"}
    server.routes["/set"] = lambda h: respond(h, 200, headers, PAGE)
    async with HttpxFetcher(replace(FAST, respect_robots=False)) as fetcher:
        await fetcher.fetch(server.url("/p1.html"))
        await fetcher.fetch(server.url("/set"))
        await fetcher.fetch(server.url("/p1.html"))
    sent = [r.headers.get("cookie") for r in server.stats.requests]
    assert sent == [None, None, "seen=1"]


class CountingGuard(AddressGuard):
    """Loopback allowed; counts resolutions; ``close()`` takes loopback away (a host
    whose DNS answer turned private)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.0/8",))
        self.resolved = 0

    async def resolve(self, host: str, port: int) -> list[str]:
        self.resolved += 1
        return await super().resolve(host, port)

    def close(self) -> None:
        self._allowed = ()


async def test_a_safe_host_is_checked_once_before_requests_and_at_every_connect(
    server: RunningServer,
) -> None:
    """The check before each request is skipped for a host found safe a moment ago (no
    DNS lookup per page), never the one at connect: the test server closes every
    connection, so each fetch connects and is checked there."""
    guard = CountingGuard()
    url = server.url("/p1.html").replace("127.0.0.1", "localhost")
    async with HttpxFetcher(replace(FAST, respect_robots=False), guard=guard) as fetcher:
        for _ in range(3):
            assert (await fetcher.fetch(url)).status == 200
        assert guard.resolved == 1 + 3  # one check before requests, one per connection
        guard.close()
        with pytest.raises(UnsafeUrl):
            await fetcher.fetch(url)  # refused at connect, though its host was found safe
    assert len(server.stats.requests) == 3


async def test_a_real_docs_page_is_fetched_with_its_links_site() -> None:
    site = require_site("requests")
    with serve_directory(site.root) as server:
        async with HttpxFetcher(FAST, scope=scope_for(server.url(site.start))) as fetcher:
            result = await fetcher.fetch(server.url(site.start))
    assert result.status == 200
    assert result.body == (site.root / site.start.lstrip("/")).read_bytes()
    assert result.final_url == server.url("/")


async def test_crawl_delay_spaces_requests_to_the_host(site: Path) -> None:
    robots = b"User-agent: mdcrawl\nCrawl-delay: 0.3\nAllow: /\n"
    with serve_directory(site, latency=0.02) as server:
        server.routes["/robots.txt"] = lambda h: respond(h, 200, {}, robots)
        async with HttpxFetcher(replace(FAST, concurrency=4)) as fetcher:
            await asyncio.gather(*(fetcher.fetch(server.url(f"/p{i}.html")) for i in range(4)))
        # Starts 0.3 s apart never overlap 20 ms answers, despite 4 slots.
        assert server.stats.max_in_flight == 1
        assert len(server.stats.paths()) == 5
