"""The naive docs crawler the crawl bench measures mdcrawl against, in the same run.

    python -m bench.naive URL --out DIR [--max-pages N] [--concurrency 8]

What one would write in an afternoon with the usual libraries, given the same means as
mdcrawl: httpx fetching on asyncio at the same concurrency, and every page converted
in a process pool of one worker per core (readability-lxml's ``Document.summary()`` then
markdownify, the links read with lxml). Breadth-first from the start URL within its
folder, HTML only, up to ``--max-pages``; each page's markdown is written to
``pages/NNNN.md`` and all of them, in discovery order, to ``docs.md``. No cache, no
resume, no politeness beyond the concurrency: it is a floor for effort, not a product.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import httpx


def convert(body: bytes, url: str) -> tuple[str, list[str]]:
    """One page: its markdown (readability + markdownify) and its links, absolute."""
    from lxml import html
    from markdownify import markdownify
    from readability import Document

    text = body.decode("utf-8", "replace")
    markdown = markdownify(Document(text).summary())
    try:
        hrefs = html.fromstring(body).xpath("//a/@href")
    except Exception:  # noqa: BLE001 - an unparsable page has no links
        hrefs = []
    return markdown, [urldefrag(urljoin(url, str(h))).url for h in hrefs]


def _folder(url: str) -> str:
    return url.rsplit("/", 1)[0] + "/"


async def crawl(start: str, out: Path, max_pages: int, concurrency: int) -> int:
    prefix, seen, order = _folder(start), {start}, [start]
    results: dict[str, str] = {}
    queue: asyncio.Queue[str] = asyncio.Queue()
    queue.put_nowait(start)
    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        async with httpx.AsyncClient(timeout=30) as client:

            async def worker() -> None:
                while True:
                    url = await queue.get()
                    try:
                        await _one(url)
                    finally:
                        queue.task_done()

            async def _one(url: str) -> None:
                try:
                    response = await client.get(url, follow_redirects=True)
                except httpx.HTTPError:
                    return
                if response.status_code != 200 or "html" not in response.headers.get(
                    "content-type", ""
                ):
                    return
                markdown, links = await loop.run_in_executor(pool, convert, response.content, url)
                results[url] = markdown
                for link in links:
                    if link.startswith(prefix) and link not in seen and len(seen) < max_pages:
                        seen.add(link)
                        order.append(link)
                        queue.put_nowait(link)

            tasks = [asyncio.create_task(worker()) for _ in range(concurrency)]
            await queue.join()
            for task in tasks:
                task.cancel()
    _write(out, [results[u] for u in order if u in results])
    return len(results)


def _write(out: Path, pages: list[str]) -> None:
    (out / "pages").mkdir(parents=True, exist_ok=True)
    for number, markdown in enumerate(pages, 1):
        (out / "pages" / f"{number:04d}.md").write_text(markdown)
    (out / "docs.md").write_text("\n\n".join(pages))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--max-pages", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    pages = asyncio.run(crawl(args.url, args.out, args.max_pages, args.concurrency))
    print(pages)


if __name__ == "__main__":
    main()
