"""A real HTTP server on 127.0.0.1 for tests and benchmarks.

Serves a directory (a Debian ``*-doc`` site or a fixture) with ETag/Last-Modified and
304s like a static host, and records what a crawler did to it: every request, the most
requests ever in flight at once, and optional latency and fault routes.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

# A route handler gets the request handler and answers the request itself.
Route = Callable[[SimpleHTTPRequestHandler], None]


@dataclass
class RequestLog:
    method: str
    path: str
    headers: dict[str, str]
    status: int = 0


@dataclass
class ServerStats:
    requests: list[RequestLog] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def paths(self, method: str = "GET") -> list[str]:
        return [r.path for r in self.requests if r.method == method]

    def statuses(self) -> list[int]:
        return [r.status for r in self.requests]

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.max_in_flight = self.in_flight


class _Handler(SimpleHTTPRequestHandler):
    server: _DocsServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass  # quiet: the stats keep what tests need

    def send_response(self, code: int, message: str | None = None) -> None:
        self._log.status = code
        super().send_response(code, message)

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._track(super().do_GET)

    def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
        self._track(super().do_HEAD)

    def _track(self, serve: Callable[[], None]) -> None:
        stats = self.server.stats
        self._log = RequestLog(self.command, self.path, {k.lower(): v for k, v in self.headers.items()})
        with stats.lock:
            stats.requests.append(self._log)
            stats.in_flight += 1
            stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            if self.server.latency:
                time.sleep(self.server.latency)
        finally:
            # Counted from request to the start of the answer, not to its end: once the
            # last byte is out the client may start its next request before this thread
            # runs again, and counting that overlap would blame the client for it.
            with stats.lock:
                stats.in_flight -= 1
        route = self.server.routes.get(self.path.split("?")[0])
        if route is not None:
            route(self)
        elif not self._not_modified():
            serve()

    def end_headers(self) -> None:
        path = Path(self.translate_path(self.path))
        if path.is_file() and self._log.status == 200:
            self.send_header("ETag", _etag(path))
        super().end_headers()

    def _not_modified(self) -> bool:
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            return False
        if self.headers.get("If-None-Match") == _etag(path):
            self.send_response(304)
            self.send_header("ETag", _etag(path))
            self.end_headers()
            return True
        return False


def _etag(path: Path) -> str:
    stat = path.stat()
    return '"' + hashlib.md5(f"{stat.st_mtime_ns}-{stat.st_size}".encode()).hexdigest() + '"'


class _KeepAliveHandler(_Handler):
    """HTTP/1.1: a connection serves request after request, as a real docs host's does.
    Without Nagle's algorithm: the stdlib writes an answer's headers and body in two
    sends, and on a connection kept open the body then waited for the client's delayed
    ACK of the headers (40 ms, twice the latency a bench asks for)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True


class _DocsServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(
        self, root: Path, latency: float, routes: dict[str, Route], keep_alive: bool = False
    ) -> None:
        self.stats = ServerStats()
        self.latency = latency
        self.routes = routes
        kind = _KeepAliveHandler if keep_alive else _Handler
        handler = lambda *a, **kw: kind(*a, directory=str(root), **kw)  # noqa: E731
        super().__init__(("127.0.0.1", 0), handler)


@dataclass
class RunningServer:
    base_url: str  # http://127.0.0.1:PORT (no trailing slash)
    stats: ServerStats
    routes: dict[str, Route]

    def url(self, path: str = "/") -> str:
        return self.base_url + path


@contextmanager
def serve_directory(
    root: Path | str,
    latency: float = 0.0,
    routes: dict[str, Route] | None = None,
    keep_alive: bool = False,
) -> Iterator[RunningServer]:
    """Serve ``root`` on 127.0.0.1 (a free port) for the duration of the block.
    ``keep_alive``: HTTP/1.1 connections kept open (default: HTTP/1.0, one connection per
    request, which the fault routes' hand-written answers rely on)."""
    routes = {} if routes is None else routes
    server = _DocsServer(Path(root), latency, routes, keep_alive)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield RunningServer(f"http://{host}:{port}", server.stats, routes)
    finally:
        server.shutdown()
        server.server_close()


def http_date(ts: float) -> str:
    return formatdate(ts, usegmt=True)
