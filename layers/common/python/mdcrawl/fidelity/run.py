"""Produce the markdown to score: serve a folder of HTML on 127.0.0.1 and run the real
``mdcrawl crawl`` over it. The only module of the scorer that touches the product."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass


@contextmanager
def serve_folder(root: Path) -> Iterator[str]:
    """``root`` served on 127.0.0.1 (a free port) for the block; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}/"
    finally:
        server.shutdown()
        server.server_close()


def crawl(start_url: str, work: Path, extra: Sequence[str] = ()) -> tuple[int, Path]:
    """Run ``mdcrawl crawl`` in this process; returns (exit code, bundle folder)."""
    from ..cli import main as mdcrawl_main  # the product, imported only to run it

    out = work / "out"
    args = ["crawl", start_url, "--out", str(out), "--cache-dir", str(work / "cache")]
    return mdcrawl_main([*args, "--quiet", *extra]), out
