"""The one network piece, shared by both runtimes: ``HttpxFetcher`` implements
``ports.Fetcher`` over an ``httpx.AsyncClient``.

Politeness and limits
  - At most ``options.concurrency`` requests in flight per host (host:port), counting
    robots.txt and sitemap requests; waiting for a slot does not count against timeouts.
  - robots.txt (protego, user agent ``mdcrawl``) is fetched once per origin and cached on
    the fetcher. 4xx means "allow all" (RFC 9309); 5xx, timeouts and connection errors also
    mean "allow all": the page fetch that follows meets the same trouble and fails on its
    own, and a docs site with a broken robots.txt is still the user's chosen site.
    ``fetch`` raises ``RobotsDisallowed`` itself (each redirect hop too), so callers cannot
    forget; ``allowed`` answers the same question without fetching the page.
  - ``Crawl-delay`` is honoured, capped at ``MAX_CRAWL_DELAY_S`` (a site asking for 30 s
    between pages would otherwise take hours): request starts to that host are spaced.

Each request
  - connect timeout ``min(timeout_s, CONNECT_TIMEOUT_S)``, read timeout ``timeout_s``, and
    a deadline of ``timeout_s`` for the whole answer (headers and body), so a server that
    trickles bytes cannot hold a slot forever.
  - body capped at ``options.max_page_bytes`` (``TooLarge``): refused from Content-Length
    when it says so, otherwise reading stops at the cap; the rest is never downloaded.
    Content-Encoding is undone incrementally with the same cap on every layer
    (``inflate.py``): a small gzip bomb stops at the cap, not at the machine's memory.
  - only HTML (text/html, application/xhtml+xml; sniffed from the first bytes when there
    is no Content-Type) else ``NotHtml``, decided before the body is read.
  - redirects followed by hand, at most ``options.max_redirects`` (``TooManyRedirects``,
    also for a loop); every hop is checked against robots, the scope (``OutOfScope``; the
    URL asked for is the caller's choice and is not re-checked) and the address guard
    (``netguard.BlockedAddress``, an ``UnsafeUrl`` and a ``FetchError``).
  - retries (``options.retries``) on timeouts, connection errors, 5xx and 429, with
    exponential backoff and jitter, or the server's Retry-After (seconds or an HTTP date);
    then ``FetchTimeout``, ``ConnectFailed`` or ``HttpStatusError``. Other 4xx are not
    retried. A Retry-After over ``RETRY_AFTER_MAX_S``, or past the deadline, is not
    waited for: ``RateLimited`` at once.
  - the job's deadline (``deadline.fetch_deadline``, set by the crawl step from the request):
    each attempt's whole-request limit is ``min(timeout_s, time left)`` and no wait
    outlives it; a request the deadline cuts ends with ``OutOfTime``. So a crawl ends
    on time even against a server that answers one byte a second.
  - conditional GET: If-None-Match / If-Modified-Since when validators are given; a 304 is
    returned as ``FetchResult(status=304, body=b"")``.
Every failure is a ``FetchError`` subclass with a message naming the URL.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import random
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx
from protego import Protego

from .deadline import time_left
from .errors import (
    ConnectFailed,
    FetchError,
    FetchTimeout,
    HttpStatusError,
    NotHtml,
    OutOfScope,
    OutOfTime,
    RateLimited,
    RobotsDisallowed,
    TooLarge,
    TooManyRedirects,
)
from .inflate import ACCEPT_ENCODING, BoundedInflater
from .models import CrawlOptions, FetchResult, Scope
from .netguard import AddressGuard, GuardedNetworkBackend, host_and_port
from .netstream import AsyncioBackend
from .sitemap import MAX_URLS, SitemapDoc, parse_sitemap
from .urls import in_scope, normalize_url, scope_for

DEFAULT_USER_AGENT = "mdcrawl/0.1 (+https://github.com/mdcrawl/mdcrawl)"
ROBOTS_AGENT = "mdcrawl"
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"

CONNECT_TIMEOUT_S = 10.0
BACKOFF_BASE_S = 0.25  # first retry waits 0.125-0.25 s, then doubles
BACKOFF_MAX_S = 20.0
RETRY_AFTER_MAX_S = 60.0
MAX_CRAWL_DELAY_S = 5.0
HOST_CHECK_S = 30.0  # how long a host's addresses, once found safe, are not checked again
SNIFF_BYTES = 1024
ROBOTS_MAX_BYTES = 512 * 1024  # Google reads the first 500 KiB
SITEMAP_MAX_BYTES = 50 * 1024 * 1024  # the protocol's limit per file
MAX_CHILD_SITEMAPS = 50
_HTML_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<meta", b"<div")


class _Retryable(Exception):
    """Internal: an attempt failed in a way that another attempt may not."""

    def __init__(self, error: FetchError, wait_s: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.wait_s = wait_s


@dataclass(frozen=True)
class _Answer:
    url: str
    status: int
    headers: dict[str, str]
    body: bytes = b""
    encoding: str | None = None
    location: str | None = None  # set for a redirect


@dataclass(frozen=True)
class _Want:
    """What a caller accepts from one GET chain."""

    max_bytes: int
    html_only: bool
    retries: int
    scope: Scope | None = None
    robots: bool = False  # check robots.txt on each hop


class RobotsCache(Protocol):
    """robots.txt texts by origin, shared beyond one fetcher (blocking calls)."""

    def get(self, origin: str) -> str | None: ...

    def put(self, origin: str, text: str) -> None: ...


class SitemapCache(Protocol):
    """A start URL's sitemap seeds (``sitemap_urls``), kept beyond one fetcher (blocking
    calls; locally ``adapters/local/sitemaps.py``)."""

    def get(self, start_url: str) -> list[str] | None: ...

    def put(self, start_url: str, urls: list[str]) -> None: ...


# A sitemap that failed like this is missing for good (asked again only once the cached
# answer is stale); any other failure (timeouts, 5xx, 429) may pass: not kept.
_SETTLED_FAILURES = (TooLarge, NotHtml, OutOfScope, TooManyRedirects, RobotsDisallowed)
_PASSING_STATUSES = frozenset({408, 425, 429})


def _settled(exc: FetchError) -> bool:
    if isinstance(exc, HttpStatusError):
        return 400 <= exc.status < 500 and exc.status not in _PASSING_STATUSES
    return isinstance(exc, _SETTLED_FAILURES)


class _Cookies(httpx.Cookies):
    """The client's cookie jar, which an answer without ``Set-Cookie`` does not enter:
    httpx builds urllib's request and response views of every answer for the jar, ~6 %
    of the event loop's CPU per fetched page, to find no cookie in nearly all of them."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


class _Client(httpx.AsyncClient):
    """httpx's client with ``_Cookies``: cookies a site sets are kept and sent back as
    before (httpx reads and merges them through the ``cookies`` property)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._jar = _Cookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._jar

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        self._jar = _Cookies(cookies)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying context per process, shared by every fetcher: building one loads the
    CA bundle (~15 ms of CPU), which a crawler Lambda paid twice per batch of 4 URLs.
    A context holds no per-connection state, so fetchers on other event loops share it."""
    return httpx.create_ssl_context(trust_env=False)


class HttpxFetcher:
    """``ports.Fetcher`` over httpx; use as ``async with HttpxFetcher(options) as f``."""

    def __init__(
        self,
        options: CrawlOptions,
        scope: Scope | None = None,
        guard: AddressGuard | None = None,
        user_agent: str = DEFAULT_USER_AGENT,
        transport: httpx.AsyncBaseTransport | None = None,
        auth: tuple[str, str] | None = None,
        robots_cache: RobotsCache | None = None,
        sitemap_cache: SitemapCache | None = None,
    ) -> None:
        self._options = options
        self._robots_cache = robots_cache  # robots.txt kept across fetchers (AWS: DynamoDB)
        self._sitemap_cache = sitemap_cache  # sitemap seeds kept across crawls (local runs)
        self._scope = scope
        self._guard = guard
        # Basic auth for the scope's own origin only: never sent to another host.
        self._auth = httpx.BasicAuth(*auth) if auth and scope else None
        self._user_agent = user_agent
        self._transport = transport
        self._client: httpx.AsyncClient | None = None  # made on the first request
        self._entered = False
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._robots: dict[str, Protego] = {}
        self._robots_locks: dict[str, asyncio.Lock] = {}
        self._delays: dict[str, float] = {}
        self._next_start: dict[str, float] = {}
        self._pace_locks: dict[str, asyncio.Lock] = {}
        self._hosts_checked: dict[tuple[str, int], float] = {}  # (host, port) -> until

    async def __aenter__(self) -> HttpxFetcher:
        # The client is made on the first request (``_need_client``): its TLS context
        # loads the CA bundle (~30 ms), which a re-crawl answered from the cache never uses.
        self._entered = True
        return self

    def _make_client(self) -> httpx.AsyncClient:
        timeout = self._options.timeout_s
        return _Client(
            transport=self._transport or self._default_transport(),
            timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_S)),
            headers={
                "User-Agent": self._user_agent,
                "Accept": ACCEPT,
                "Accept-Encoding": ACCEPT_ENCODING,  # what inflate.py undoes
            },
            follow_redirects=False,
            trust_env=False,  # no proxies from the environment: the guard must see the host
        )

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._entered = False
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _default_transport(self) -> httpx.AsyncBaseTransport:
        transport = httpx.AsyncHTTPTransport(verify=_ssl_context(), trust_env=False)
        # httpx has no public hook for httpcore's network backend, and the backend is where
        # a checked address can be pinned for the connect (no DNS rebinding) and where
        # anyio's per-operation overhead is left out (``netstream.py``). The limits are
        # httpx's defaults.
        backend: httpcore.AsyncNetworkBackend = AsyncioBackend()
        if self._guard is not None:
            backend = GuardedNetworkBackend(self._guard, backend)
        transport._pool = httpcore.AsyncConnectionPool(
            ssl_context=_ssl_context(),
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=backend,
        )
        return transport

    # -- the port ------------------------------------------------------------------------

    async def fetch(
        self, url: str, etag: str | None = None, last_modified: str | None = None
    ) -> FetchResult:
        """GET an HTML page (conditional when validators are given). Raises FetchError."""
        headers = _conditional_headers(etag, last_modified)
        want = _Want(
            max_bytes=self._options.max_page_bytes,
            html_only=True,
            retries=self._options.retries,
            scope=self._scope,
            robots=self._options.respect_robots,
        )
        answer = await self._follow(url, headers, want)
        return FetchResult(
            url=url,
            final_url=normalize_url(answer.url) or answer.url,
            status=answer.status,
            headers=answer.headers,
            body=answer.body,
            encoding=answer.encoding,
        )

    async def fetch_text(self, url: str, accept: str | None = None) -> FetchResult:
        """GET any resource in scope, not only HTML (a page's markdown twin), asking for
        ``accept`` when given (content negotiation). Raises FetchError."""
        want = _Want(
            max_bytes=self._options.max_page_bytes,
            html_only=False,
            retries=1,
            scope=self._scope,
            robots=self._options.respect_robots,
        )
        answer = await self._follow(url, {"Accept": accept} if accept else {}, want)
        final = normalize_url(answer.url) or answer.url
        return FetchResult(url, final, answer.status, answer.headers, answer.body, answer.encoding)

    async def allowed(self, url: str) -> bool:
        """Whether robots.txt lets ``mdcrawl`` fetch ``url`` (True when robots are ignored)."""
        if not self._options.respect_robots:
            return True
        robots = await self._robots_for(url)
        return robots.can_fetch(url, ROBOTS_AGENT)

    async def sitemap_urls(self, start_url: str) -> list[str]:
        """Page URLs from robots ``Sitemap:`` lines, ``<prefix>/sitemap.xml`` and
        ``/sitemap.xml``, with one level of sitemap index; deduplicated, at most
        ``sitemap.MAX_URLS``, not filtered by scope (the caller does that). From the
        sitemap cache while it knows them; a settled answer is kept there."""
        start = normalize_url(start_url)
        if start is None:
            return []
        cache = self._sitemap_cache
        if cache is not None:
            known = await asyncio.to_thread(cache.get, start)
            if known is not None:
                return known
        urls, settled = await self._sitemap_seeds(start)
        if cache is not None and settled:
            await asyncio.to_thread(cache.put, start, urls)
        return urls

    async def _sitemap_seeds(self, start: str) -> tuple[list[str], bool]:
        """The seeds, and whether every sitemap asked for answered for good."""
        found: dict[str, None] = {}
        settled = True
        for sitemap_url in await self._sitemap_candidates(start):
            doc, answered = await self._sitemap(sitemap_url)
            found.update(dict.fromkeys(doc.urls))
            for child in doc.sitemaps[:MAX_CHILD_SITEMAPS]:
                child_doc, child_answered = await self._sitemap(child)
                found.update(dict.fromkeys(child_doc.urls))
                answered = answered and child_answered
            settled = settled and answered
            if len(found) >= MAX_URLS:
                break
        return list(found)[:MAX_URLS], settled

    # -- redirects, retries, one attempt -------------------------------------------------

    def _need_client(self) -> httpx.AsyncClient:
        if not self._entered:
            raise RuntimeError("HttpxFetcher is used outside `async with`")
        if self._client is None:
            self._client = self._make_client()
        return self._client

    async def _follow(self, url: str, headers: Mapping[str, str], want: _Want) -> _Answer:
        current = url.split("#", 1)[0]
        seen = {current}
        for _hop in range(self._options.max_redirects + 1):
            if want.robots and not await self.allowed(current):
                raise RobotsDisallowed(f"robots.txt disallows {current}")
            answer = await self._with_retries(current, headers, want)
            if answer.location is None:
                return answer
            target = _redirect_target(current, answer.location)
            if target in seen:
                raise TooManyRedirects(f"redirect loop: {current} -> {target} (from {url})")
            if want.scope is not None and not in_scope(normalize_url(target) or "", want.scope):
                raise OutOfScope(f"{url} redirects to {target}, outside the crawl's scope")
            seen.add(target)
            current = target
        raise TooManyRedirects(f"{url}: more than {self._options.max_redirects} redirects")

    async def _with_retries(self, url: str, headers: Mapping[str, str], want: _Want) -> _Answer:
        for attempt in itertools.count():
            try:
                return await self._attempt(url, headers, want)
            except _Retryable as failure:
                if attempt >= want.retries:
                    raise failure.error from failure.__cause__
                await asyncio.sleep(_wait_before_retry(url, failure, attempt))
        raise AssertionError("unreachable")  # itertools.count() never ends

    async def _attempt(self, url: str, headers: Mapping[str, str], want: _Want) -> _Answer:
        host = urlsplit(url).netloc.lower()
        await self._check_address(url)
        await self._pace(host)
        async with self._slot(host):
            limit_s, cut_by_deadline = _attempt_limit(url, self._options.timeout_s)
            try:
                async with asyncio.timeout(limit_s):
                    request = self._need_client().stream(
                        "GET", url, headers=dict(headers), auth=self._auth_for(url)
                    )
                    async with request as response:
                        return await _read(response, url, want)
            except (TimeoutError, httpx.TimeoutException) as exc:
                if cut_by_deadline:
                    raise OutOfTime(f"{url}: the crawl's time budget ended first") from exc
                message = f"{url}: no answer within {self._options.timeout_s:g} s"
                raise _Retryable(FetchTimeout(message)) from exc
            except httpx.TransportError as exc:
                raise _Retryable(ConnectFailed(f"{url}: {type(exc).__name__}: {exc}")) from exc
            except httpx.HTTPError as exc:  # a body that will not decode, an invalid URL
                raise FetchError(f"{url}: {type(exc).__name__}: {exc}") from exc

    def _auth_for(self, url: str) -> httpx.BasicAuth | None:
        if self._auth is None or self._scope is None:
            return None
        parts = urlsplit(url)
        same_origin = (parts.scheme.lower(), parts.netloc.lower()) == (
            self._scope.scheme,
            self._scope.host,
        )
        return self._auth if same_origin else None

    async def _check_address(self, url: str) -> None:
        """Checked before each request, so a blocked hop fails clearly and early; the
        guarded backend checks again at connect time (and also covers a custom transport).
        A host found safe is not resolved again for ``HOST_CHECK_S``: that saves a DNS
        lookup in a thread per request, and weakens nothing, since every connection is
        still checked when it is made (a host whose DNS turns to a private address in
        between is refused there, with the same error)."""
        if self._guard is None:
            return
        host, port = host_and_port(url)
        now = time.monotonic()
        pinned = self._transport is None  # the guarded backend checks each connect
        if pinned and self._hosts_checked.get((host, port), 0.0) > now:
            return
        try:
            await self._guard.resolve(host, port)
        except OSError as exc:
            raise _Retryable(ConnectFailed(f"{url}: cannot resolve {host!r}: {exc}")) from exc
        self._hosts_checked[(host, port)] = now + HOST_CHECK_S

    def _slot(self, host: str) -> asyncio.Semaphore:
        slot = self._slots.get(host)
        if slot is None:
            slot = self._slots[host] = asyncio.Semaphore(max(1, self._options.concurrency))
        return slot

    async def _pace(self, host: str) -> None:
        """Space request starts to a host by its robots Crawl-delay (when there is one)."""
        delay = self._delays.get(host, 0.0) if self._options.respect_robots else 0.0
        if delay <= 0:
            return
        async with self._pace_locks.setdefault(host, asyncio.Lock()):
            wait = self._next_start.get(host, 0.0) - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._next_start[host] = time.monotonic() + delay

    # -- robots.txt and sitemaps ---------------------------------------------------------

    async def _robots_for(self, url: str) -> Protego:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        known = self._robots.get(origin)
        if known is not None:  # every request after the first: no lock, no new Lock object
            return known
        lock = self._robots_locks.get(origin)
        if lock is None:
            lock = self._robots_locks[origin] = asyncio.Lock()
        async with lock:
            robots = self._robots.get(origin)
            if robots is None:
                robots = self._robots[origin] = Protego.parse(await self._robots_text(origin))
                delay = robots.crawl_delay(ROBOTS_AGENT)
                if delay:
                    self._delays[parts.netloc.lower()] = min(float(delay), MAX_CRAWL_DELAY_S)
        return robots

    async def _robots_text(self, origin: str) -> str:
        cache = self._robots_cache
        if cache is not None:
            known = await asyncio.to_thread(cache.get, origin)
            if known is not None:
                return known
        text = await self._fetch_robots_text(origin)
        if cache is not None:
            await asyncio.to_thread(cache.put, origin, text)
        return text

    async def _fetch_robots_text(self, origin: str) -> str:
        want = _Want(max_bytes=ROBOTS_MAX_BYTES, html_only=False, retries=0)
        try:
            answer = await self._follow(origin + "/robots.txt", {}, want)
        except FetchError:
            return ""  # 4xx, 5xx, timeouts, unreachable, oversized: allow all (see above)
        return answer.body.decode(answer.encoding or "utf-8", errors="replace")

    async def _sitemap_candidates(self, start: str) -> list[str]:
        parts = urlsplit(start)
        origin = f"{parts.scheme}://{parts.netloc}"
        robots = await self._robots_for(start)
        prefix = scope_for(start).path_prefix
        raw = [*robots.sitemaps, origin + prefix + "sitemap.xml", origin + "/sitemap.xml"]
        return list(dict.fromkeys(u for u in map(normalize_url, raw) if u is not None))

    async def _sitemap(self, url: str) -> tuple[SitemapDoc, bool]:
        """The sitemap at ``url``, and whether that answer is settled (kept)."""
        want = _Want(max_bytes=SITEMAP_MAX_BYTES, html_only=False, retries=1)
        try:
            answer = await self._follow(url, {}, want)
        except FetchError as exc:
            return SitemapDoc(), _settled(exc)  # missing or broken: only fewer seeds
        return parse_sitemap(answer.body), True


# -- reading one response ---------------------------------------------------------------


async def _read(response: httpx.Response, url: str, want: _Want) -> _Answer:
    status = response.status_code
    headers = {k.lower(): v for k, v in response.headers.items()}
    if status in REDIRECT_STATUSES:
        location = response.headers.get("location", "").strip()
        if not location:
            raise HttpStatusError(f"{url}: HTTP {status} redirect without a Location", status)
        return _Answer(url, status, headers, location=location)
    if status == 304:
        return _Answer(url, 304, headers)
    if status == 429 or status >= 500:
        error = HttpStatusError(f"{url}: HTTP {status} {response.reason_phrase}".strip(), status)
        raise _Retryable(error, _retry_after(response.headers.get("retry-after")))
    if not 200 <= status < 300:
        raise HttpStatusError(f"{url}: HTTP {status} {response.reason_phrase}".strip(), status)
    _refuse_declared(response, url, want)
    body = await _read_body(response, url, want)
    return _Answer(url, status, headers, body, response.charset_encoding)


def _refuse_declared(response: httpx.Response, url: str, want: _Want) -> None:
    """Refuse from the headers alone, before any of the body is read."""
    content_type = _content_type(response)
    if want.html_only and content_type and content_type not in HTML_TYPES:
        raise NotHtml(f"{url}: {content_type} is not HTML")
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > want.max_bytes:
        raise TooLarge(f"{url}: {int(length)} bytes announced, over the {want.max_bytes} cap")


async def _read_body(response: httpx.Response, url: str, want: _Want) -> bytes:
    """The decoded body, read raw and inflated here (``inflate.py``): httpx would inflate
    each network chunk whole, however large it becomes."""
    sniff = want.html_only and not _content_type(response)
    inflater = BoundedInflater(response.headers.get("content-encoding", ""), want.max_bytes, url)
    chunks: list[bytes] = []
    size = 0
    async for raw in response.aiter_raw():
        for chunk in inflater.feed(raw):
            size += len(chunk)
            if size > want.max_bytes:
                raise TooLarge(f"{url}: over the {want.max_bytes} byte cap")
            chunks.append(chunk)
        if sniff and size >= SNIFF_BYTES:
            _require_html_prefix(b"".join(chunks), url)
            sniff = False
    body = b"".join(chunks)
    if sniff:
        _require_html_prefix(body, url)
    return body


def _require_html_prefix(data: bytes, url: str) -> None:
    """No Content-Type: accept what starts like an HTML document (WHATWG-style sniff)."""
    head = data[:SNIFF_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if b"\x00" in head or not any(marker in head for marker in _HTML_MARKERS):
        raise NotHtml(f"{url}: no Content-Type and the body does not look like HTML")


def _content_type(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip().lower()


def _redirect_target(current: str, location: str) -> str:
    target = urljoin(current, location).split("#", 1)[0]
    if urlsplit(target).scheme.lower() not in ("http", "https"):
        raise OutOfScope(f"{current} redirects to {target!r}, which is not http(s)")
    return target


def _conditional_headers(etag: str | None, last_modified: str | None) -> dict[str, str]:
    headers = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers


def _attempt_limit(url: str, timeout_s: float) -> tuple[float, bool]:
    """(the whole-request time limit, whether the deadline is what sets it)."""
    left = time_left()
    if left is None or left >= timeout_s:
        return timeout_s, False
    if left <= 0:
        raise OutOfTime(f"{url}: the crawl's time budget ended before it could be fetched")
    return left, True


def _wait_before_retry(url: str, failure: _Retryable, attempt: int) -> float:
    """How long to wait before the next attempt; raises when that wait is not allowed:
    ``RateLimited`` for a Retry-After over the cap or past the deadline, ``OutOfTime``
    when the backoff itself would outlive the deadline."""
    asked = failure.wait_s
    left = time_left()
    if asked is not None and (asked > RETRY_AFTER_MAX_S or (left is not None and asked >= left)):
        raise RateLimited(
            f"{url}: the server asks to come back in {asked:g} s ({failure.error}); "
            f"that is past the crawl's time budget or the {RETRY_AFTER_MAX_S:g} s cap"
        ) from failure.error
    wait_s = asked if asked is not None else _backoff(attempt)
    if left is not None and wait_s >= left:
        raise OutOfTime(f"{url}: the crawl's time budget ended ({failure.error})") from failure
    return wait_s


def _backoff(attempt: int) -> float:
    """Exponential with jitter: half to all of base * 2**attempt, capped."""
    ceiling = min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2**attempt)
    return ceiling * random.uniform(0.5, 1.0)


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            seconds = (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds()
        except (TypeError, ValueError):
            return None
    return max(seconds, 0.0)
