"""Event-loop CPU per fetched page: ``HttpxFetcher`` alone, as a crawl's main process runs it.

    python -m bench.loop [--site django] [--pages 600] [--rounds 3]
    PYTHONPATH=/tmp/before/layers/common/python python -m bench.loop   # another tree

Serves a Debian docs site on 127.0.0.1 twice: as the test server does (HTTP/1.0, a
connection per request) and with keep-alive (HTTP/1.1, as real servers answer), and
fetches its pages at concurrency 8, 16 at a time. Prints the CPU time of the thread
running the event loop per fetch (``time.thread_time``: the server's threads, in the
same process, are not counted). Nothing is asserted: compare trees on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from mdcrawl.fetch import HttpxFetcher
from mdcrawl.models import CrawlOptions

from bench.crawl import SITES
from tests.support import server as test_server

CONCURRENCY = 8
GATHERED = 16


async def fetch_all(base: str, pages: list[str]) -> tuple[float, float]:
    """(event-loop CPU ms per fetch, wall seconds) for one pass over ``pages``."""
    options = CrawlOptions(concurrency=CONCURRENCY)
    async with HttpxFetcher(options) as fetcher:
        await fetcher.fetch(f"{base}/{pages[0]}")  # robots.txt read, connections warm
        cpu, wall = time.thread_time(), time.perf_counter()
        gate = asyncio.Semaphore(GATHERED)

        async def one(page: str) -> None:
            async with gate:
                await fetcher.fetch(f"{base}/{page}")

        await asyncio.gather(*(one(page) for page in pages))
        return (time.thread_time() - cpu) / len(pages) * 1000, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", default="django", choices=sorted(SITES))
    parser.add_argument("--pages", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root: Path = SITES[args.site]
    pages = sorted(str(p.relative_to(root)) for p in root.rglob("*.html"))[: args.pages]
    handler = test_server._Handler
    for protocol in ("HTTP/1.0", "HTTP/1.1"):
        handler.protocol_version = protocol  # 1.1: the handler keeps connections alive
        with test_server.serve_directory(root) as served:
            base = served.url("").rstrip("/")
            for _ in range(args.rounds):
                ms, wall = asyncio.run(fetch_all(base, pages))
                line = f"{protocol} {len(pages)} pages: loop CPU {ms:.3f} ms/fetch"
                print(f"{line}, wall {wall:.1f} s", flush=True)
    handler.protocol_version = "HTTP/1.0"


if __name__ == "__main__":
    main()
