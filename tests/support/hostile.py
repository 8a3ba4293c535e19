"""A hostile docs site on loopback, for the tests of issue 9 (bounded memory, kept budgets,
no SSRF): ordinary pages next to traps, served by a threaded stdlib server bound to a
chosen loopback address (127.0.0.1, or 127.0.0.2 as "somewhere else").

Traps (paths under the site):
  /bomb.html       ``Content-Encoding: gzip, gzip``: a few KB that inflate to ``BOMB_BYTES``
  /limited.html    429 with ``Retry-After: 3600``
  /busy.html       503 with ``Retry-After: 3600``
  /trickle.html    a page sent one byte a second (for ``TRICKLE_S`` seconds)
  /deep.html       100,000 nested ``<div>`` with text at the bottom
  /latin1.html     Latin-1 bytes served as ``charset=utf-8``, anchors with accents
  /robots.txt      ``Sitemap:`` pointing at another address (``sitemap_elsewhere``), or a
                   redirect to another address (``robots_elsewhere``)

Every request is logged (``requests``: (path, client address)), so a test can assert that
an address was never contacted.
"""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BOMB_BYTES = 1024**3  # what the double-gzip body inflates to (1 GiB)
TRICKLE_S = 120
DEEP_LEVELS = 100_000
ORDINARY = ("/", "/guide.html", "/api.html", "/faq.html")
TRAPS = (
    "/bomb.html",
    "/limited.html",
    "/busy.html",
    "/trickle.html",
    "/deep.html",
    "/latin1.html",
)
LATIN1_HEADING = "Grüße Café Naïve"


@dataclass
class HostileSite:
    """What the site serves; ``robots`` is the robots.txt body (None: 404)."""

    robots: str | None = None
    robots_redirect: str | None = None  # a URL: /robots.txt answers 302 there
    requests: list[tuple[str, str]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)  # Authorization headers seen
    lock: threading.Lock = field(default_factory=threading.Lock)

    def log(self, path: str, client: str) -> None:
        with self.lock:
            self.requests.append((path, client))

    def paths(self) -> list[str]:
        with self.lock:
            return [path for path, _ in self.requests]


@dataclass
class RunningSite:
    base_url: str  # http://127.0.0.x:PORT
    site: HostileSite

    def url(self, path: str = "/") -> str:
        return self.base_url + path


@cache
def double_gzip_bomb(size: int = BOMB_BYTES) -> bytes:
    """``size`` bytes of an HTML page, gzipped twice (made once per process)."""
    inner = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * (1024 * 1024)
    parts = [inner.compress(b"<html><body><p>")]
    parts += [inner.compress(block) for _ in range(size // len(block))]
    parts.append(inner.flush())
    return gzip.compress(b"".join(parts), 9)


def index_page() -> bytes:
    links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in (*ORDINARY[1:], *TRAPS))
    return _page("Hostile docs", f"<p>Start here.</p><ul>{links}</ul>")


def _page(title: str, body: str) -> bytes:
    html = f"<!doctype html><html><head><title>{title}</title></head><body><main>"
    return (html + f"<h1>{title}</h1>{body}</main></body></html>").encode()


def deep_page() -> bytes:
    nested = "<div>" * DEEP_LEVELS + "<p>the bottom of the well</p>" + "</div>" * DEEP_LEVELS
    return _page("Deep", nested + "<p>after the well</p>")


def latin1_page() -> bytes:
    slug = "grüße-café-naïve"
    body = (
        f'<p>Jump to <a href="#{slug}">the section</a>.</p>'
        f'<h2 id="{slug}">{LATIN1_HEADING}</h2><p>Voilà.</p>'
    )
    html = "<!doctype html><html><head><title>Latin</title></head><body><main><h1>Latin</h1>"
    return (html + body + "</main></body></html>").encode("latin-1")


class _Handler(BaseHTTPRequestHandler):
    server: _HostileServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        site = self.server.site
        path = self.path.split("?", 1)[0]
        site.log(path, self.client_address[0])
        if self.headers.get("Authorization"):
            site.authorizations.append(self.headers["Authorization"])
        route = {
            "/robots.txt": self._robots,
            "/bomb.html": self._bomb,
            "/limited.html": lambda: self._status(429),
            "/busy.html": lambda: self._status(503),
            "/trickle.html": self._trickle,
            "/deep.html": lambda: self._send(200, deep_page()),
            "/latin1.html": lambda: self._send(200, latin1_page()),
            "/sitemap.xml": self._sitemap,
        }.get(path)
        if route is not None:
            route()
        elif path in ("/", "/index.html"):
            self._send(200, index_page())
        elif path in ORDINARY:
            self._send(200, _page(path.strip("/").removesuffix(".html"), "<p>Plain words.</p>"))
        else:
            self._send(404, b"not here", "text/plain")

    def _send(
        self, status: int, body: bytes, kind: str = "text/html; charset=utf-8", **headers: str
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _status(self, status: int) -> None:
        self._send(status, b"come back later", "text/plain", Retry_After="3600")

    def _robots(self) -> None:
        site = self.server.site
        if site.robots_redirect:
            self.send_response(302)
            self.send_header("Location", site.robots_redirect)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif site.robots is None:
            self._send(404, b"", "text/plain")
        else:
            self._send(200, site.robots.encode(), "text/plain")

    def _sitemap(self) -> None:
        urls = "".join(f"<url><loc>{self.server.base_url}{p}</loc></url>" for p in ORDINARY)
        body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        self._send(200, body.encode(), "application/xml")

    def _bomb(self) -> None:
        self._send(200, double_gzip_bomb(), Content_Encoding="gzip, gzip")

    def _trickle(self) -> None:
        body = b"<html><body><main><h1>Slow</h1>" + b"." * TRICKLE_S
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                time.sleep(1.0)
        except OSError:
            return  # the client gave up: good


class _HostileServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, host: str, site: HostileSite) -> None:
        self.site = site
        super().__init__((host, 0), _Handler)
        self.base_url = f"http://{host}:{self.server_address[1]}"


@contextmanager
def serve_hostile(
    host: str = "127.0.0.1", site: HostileSite | None = None
) -> Iterator[RunningSite]:
    """Serve a hostile site on ``host`` (a free port) for the duration of the block."""
    server = _HostileServer(host, site or HostileSite())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield RunningSite(server.base_url, server.site)
    finally:
        server.shutdown()
        server.server_close()
