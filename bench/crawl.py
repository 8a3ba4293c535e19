"""Crawl benchmark: printed ratios against baselines measured in the same run.

    python -m bench.crawl [--site django python rustcore] [--latency 0.02] [--big] [--keep-alive]

Serves a real Debian docs site on 127.0.0.1 with per-request latency, then measures:
the fresh crawl's wall time, CPU time and peak RSS (the CLI as a subprocess, pool
workers included); the cached re-crawl (the same command again, same output folder;
and into another folder, where the outputs are assembled in full); (a) the fetch-only
floor: a plain httpx crawl of the same pages at the same concurrency (and of every URL
the crawl asked for: its pages and the links that failed, a 404 costing a request like
any page; the row under the first one divides by that floor); (b) the
conversion CPU of the same pages (ours and the naive readability-lxml + markdownify
pipeline) divided by the cores; (c) the naive crawler (``bench/naive.py``: httpx + a
process pool running readability and markdownify) on the same site, same concurrency
and page cap.
``--big`` also crawls a ~2,000-page site made of several Debian doc trees, for peak RSS.
Each site ends with the rows of issue 13's table (``row ...``), goals beside them.
Nothing is asserted: the machine is noisy; read the ratios. The wall ratio suffers
from other load on the machine (the load average is printed); the CPU ratio (the
crawl's whole CPU bill over the conversion CPU) does not, and says how much work
beyond converting the crawl does: on an idle machine the wall ratio cannot beat it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.proc import Measured, measure
from tests.support.server import serve_directory

SITES = {
    "django": Path("/usr/share/doc/python-django-doc/html"),
    "python": Path("/usr/share/doc/python3.11/html"),
    "celery": Path("/usr/share/doc/python-celery-doc/html"),
    "cargo": Path("/usr/share/doc/cargo/doc"),
    "postgresql": Path("/usr/share/doc/postgresql-doc-15/html"),
    # API references of generators no rule was written for: javadoc, gtk-doc.
    "javadoc": Path("/usr/share/doc/libcommons-lang3-java/api"),
    "gtkdoc": Path("/usr/share/gtk-doc/html/glib"),
    # Rust's `core` API reference (rust-doc): 27,000 small pages (median ~6 KB), capped.
    "rustcore": Path("/usr/share/doc/rust-doc/html"),
}
# Where a crawl starts, when not at /index.html. cargo-doc's folder has no index.html:
# mdcrawl reads /index.html as / (the server's listing of the crates), the naive
# crawler asked for /index.html and measured nothing.
START = {"rustcore": "/core/index.html", "cargo": "/"}
MAX_PAGES = {"rustcore": 2400}
DEFAULT_SITES = ("django", "python", "rustcore")
CONCURRENCY = 8
MDCRAWL = str(Path(sys.executable).with_name("mdcrawl"))


def crawl(url: str, work: Path, name: str, max_pages: int = 5000) -> Measured:
    cmd = [
        MDCRAWL,
        "crawl",
        url,
        "--out",
        str(work / name),
        "--cache-dir",
        str(work / "cache"),
        "--quiet",
        "--max-pages",
        str(max_pages),
        "--budget",
        "3000",
        "--concurrency",
        str(CONCURRENCY),
    ]
    measured = measure(cmd)
    if measured.code != 0:
        raise SystemExit(f"crawl failed with exit {measured.code}: {' '.join(cmd)}")
    return measured


def ok_urls(out: Path) -> list[str]:
    return manifest_urls(out, ("ok",))


def manifest_urls(out: Path, statuses: tuple[str, ...]) -> list[str]:
    lines = (out / "manifest.jsonl").read_text().splitlines()
    return [row["url"] for row in map(json.loads, lines) if row["status"] in statuses]


async def _fetch_all(urls: list[str], ok_only: bool) -> None:
    limit = asyncio.Semaphore(CONCURRENCY)
    async with httpx.AsyncClient(timeout=30) as client:

        async def one(url: str) -> None:
            async with limit:
                answer = await client.get(url)
                if ok_only:
                    answer.raise_for_status()

        await asyncio.gather(*(one(u) for u in urls))


def fetch_floor(urls: list[str], ok_only: bool = True) -> float:
    """Wall time to GET ``urls`` at the crawl's concurrency, nothing else done."""
    start = time.perf_counter()
    asyncio.run(_fetch_all(urls, ok_only))
    return time.perf_counter() - start


def naive_crawl(url: str, work: Path, max_pages: int) -> Measured:
    """bench/naive.py in a subprocess: the baseline crawler, measured like ours."""
    cmd = [sys.executable, "-m", "bench.naive", url, "--out", str(work / "naive")]
    cmd += ["--max-pages", str(max_pages), "--concurrency", str(CONCURRENCY)]
    measured = measure(cmd, stdout=subprocess.DEVNULL)
    if measured.code != 0:
        raise SystemExit(f"naive crawl failed with exit {measured.code}: {' '.join(cmd)}")
    return measured


def cpu_ms(convert, pages: list[tuple[str, bytes]]) -> list[float]:  # noqa: ANN001
    times = []
    for url, body in pages:
        start = time.process_time()
        convert(body, url)
        times.append((time.process_time() - start) * 1000)
    return times


def slowest(pages: list[tuple[str, bytes]], times: list[float], base: str, n: int = 5) -> str:
    rows = sorted(zip(times, pages, strict=True), key=lambda row: -row[0])[:n]
    return "\n".join(
        f"  {ms:7.0f} ms {len(body) / 1024:6.0f} KiB  {url[len(base) :]}"
        for ms, (url, body) in rows
    )


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def ours(body: bytes, url: str) -> None:
    from mdcrawl.convert import convert_html

    convert_html(body, url)


def naive(body: bytes, url: str) -> None:
    from markdownify import markdownify
    from readability import Document

    markdownify(Document(body.decode("utf-8", "replace")).summary())


def page_bodies(urls: list[str], base: str, root: Path) -> list[tuple[str, bytes]]:
    pages = []
    for url in urls:
        path = url[len(base) :].split("#")[0] or "/"
        file = root / path.lstrip("/")
        file = file / "index.html" if path.endswith("/") else file
        if file.is_file():
            pages.append((url, file.read_bytes()))
    return pages


def describe(label: str, times: list[float]) -> str:
    p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]
    return f"{label}: median {statistics.median(times):.1f} ms/page, p90 {p90:.1f} ms/page"


def bench_site(
    name: str,
    root: Path,
    latency: float,
    start_path: str = "/index.html",
    max_pages: int = 5000,
    keep_alive: bool = False,
) -> None:
    cores = os.cpu_count() or 1
    serving = serve_directory(root, latency=latency, keep_alive=keep_alive)
    with tempfile.TemporaryDirectory() as tmp, serving as server:
        work = Path(tmp)
        load_before = load()
        fresh = crawl(server.url(start_path), work, "fresh", max_pages)
        load_after = load()
        urls = ok_urls(work / "fresh")
        # What the crawl asked the server for: its pages, and the URLs that failed (a
        # link to a missing page costs a request like any other).
        requested = manifest_urls(work / "fresh", ("ok", "failed"))
        # The same command again (same output folder): what a user re-running it pays.
        cached = crawl(server.url(start_path), work, "fresh", max_pages)
        # Into another folder: nothing of the last assembly can stand, all is written.
        elsewhere = crawl(server.url(start_path), work, "cached", max_pages)
        floor = fetch_floor(urls)
        floor_requested = fetch_floor(requested, ok_only=False)
        naive_run = naive_crawl(server.url(start_path), work, max_pages)
        naive_pages = len(list((work / "naive" / "pages").glob("*.md")))
    pages = page_bodies(urls, server.base_url, root)
    our_ms, naive_ms = cpu_ms(ours, pages), cpu_ms(naive, pages)
    conv_cpu = sum(our_ms) / 1000
    conv_wall = conv_cpu / cores
    bound = max(floor, conv_wall)
    print(
        f"\n== {root}{start_path} ({len(urls)} pages, latency {latency * 1000:.0f} ms, "
        f"{'HTTP/1.1 kept alive' if keep_alive else 'HTTP/1.0'}, {cores} cores)"
    )
    print(f"load average            {load_before} before, {load_after} after the fresh crawl")
    print(f"fresh crawl wall        {fresh.wall_s:7.2f} s   peak RSS {fresh.peak_rss_mb:.0f} MB")
    print(f"fetch-only floor        {floor:7.2f} s   (its {len(urls)} pages)")
    print(f"  every URL it asked    {floor_requested:7.2f} s   ({len(requested)} URLs)")
    print(f"conversion CPU / cores  {conv_wall:7.2f} s")
    print(f"fresh crawl CPU (tree)  {fresh.cpu_s:7.2f} s   (conversion CPU {conv_cpu:.2f} s)")
    print(f"cached re-crawl wall    {cached.wall_s:7.2f} s   CPU {cached.cpu_s:.2f} s")
    print(
        f"  into another folder   {elsewhere.wall_s:7.2f} s   CPU {elsewhere.cpu_s:.2f} s"
        f"   ratio {elsewhere.wall_s / fresh.wall_s:.3f}"
    )
    print(
        f"naive crawler wall      {naive_run.wall_s:7.2f} s   CPU {naive_run.cpu_s:.2f} s, "
        f"peak RSS {naive_run.peak_rss_mb:.0f} MB, {naive_pages} pages"
    )
    # The ratio rows divide by our own conversion CPU: a faster converter raises the
    # CPU row though the crawl got cheaper. What the crawl spends beyond converting, per
    # page, does not move with the converter.
    outside = (fresh.cpu_s - conv_cpu) / max(1, len(urls)) * 1000
    print(f"crawl CPU outside conversion {outside:5.2f} ms/page")
    print(describe("conversion, ours ", our_ms))
    print(describe("conversion, naive", naive_ms))
    print("slowest pages to convert (ours):")
    print(slowest(pages, our_ms, server.base_url))
    rows = (
        ("fresh wall / max(fetch floor, conversion CPU / cores)", fresh.wall_s / bound, "<= 1.2"),
        (
            "  the floor of every URL it asked for",
            fresh.wall_s / max(floor_requested, conv_wall),
            "<= 1.2",
        ),
        ("whole crawl CPU / conversion CPU", fresh.cpu_s / conv_cpu, "<= 1.1"),
        ("cached re-crawl / fresh", cached.wall_s / fresh.wall_s, "<= 0.1"),
        ("fresh / naive crawler", fresh.wall_s / naive_run.wall_s, "<= 0.4 on small pages"),
        ("conversion CPU ours / naive", sum(our_ms) / sum(naive_ms), "<= 1.0"),
    )
    for label, value, goal in rows:
        print(f"row {name:<10} {label:<55} {value:6.3f}   goal {goal}")


def big_site(tmp: Path) -> Path:
    """Several Debian doc trees under one root, with an index linking each: ~2,000 pages."""
    links = []
    for name in ("django", "python", "celery", "cargo"):
        root = SITES[name]
        if root.is_dir():
            (tmp / name).symlink_to(root)
            start = "proc_macro2/index.html" if name == "cargo" else "index.html"
            links.append(f'<li><a href="{name}/{start}">{name}</a></li>')
    (tmp / "index.html").write_text(
        f"<html><body><main><h1>Docs</h1><ul>{''.join(links)}</ul></main></body></html>"
    )
    return tmp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", nargs="+", default=DEFAULT_SITES, choices=sorted(SITES))
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--big", action="store_true", help="also a ~2,000-page site, for RSS")
    parser.add_argument(
        "--keep-alive",
        action="store_true",
        help="serve HTTP/1.1 with connections kept open, as real docs hosts do (default: "
        "HTTP/1.0, a connection per request: the numbers the README has tracked)",
    )
    args = parser.parse_args()
    for site in args.site:
        start = START.get(site, "/index.html")
        pages = MAX_PAGES.get(site, 5000)
        bench_site(site, SITES[site], args.latency, start, pages, args.keep_alive)
    if args.big:
        with tempfile.TemporaryDirectory() as tmp:
            bench_site("big", big_site(Path(tmp)), args.latency, keep_alive=args.keep_alive)


if __name__ == "__main__":
    main()
