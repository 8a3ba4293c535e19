"""Retrieval benchmark for the docs library: recall@5 and MRR on developer questions, and
search latency over a 5,000-page library. Printed, never asserted.

    python -m bench.retrieval [--pages 5000]

Each fixture site (the requests and Flask docs from Debian) is served on 127.0.0.1 and
crawled into a fresh library; each question of ``bench.questions`` is searched; its
hits are folded to pages in rank order; a question counts for recall@5 when a page that
answers it is among the first five pages, and adds 1/rank of the first such page to the
MRR. Latency: the pages of both sites copied under distinct URLs until the library holds
``--pages`` pages (real text, so real posting-list lengths), then every question searched
five times; the median and p95 of one search are printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from mdcrawl.cli import main as mdcrawl
from mdcrawl.library import Library, LibraryPage, Snapshot

from bench.questions import FLASK, REQUESTS
from tests.support.server import serve_directory

SITES = {
    "requests": (Path("/usr/share/doc/python-requests-doc/html"), REQUESTS),
    "flask": (Path("/usr/share/doc/python-flask-doc/html"), FLASK),
}
DEPTH = 30  # chunks fetched per question, folded to pages


def crawl_site(root: Path, cache: Path) -> str:
    with serve_directory(root) as server:
        base = server.url("/")
        code = mdcrawl(
            [
                "crawl",
                server.url("/index.html"),
                "--cache-dir",
                str(cache),
                "-q",
                "--out",
                str(cache / "out"),
                "--max-age",
                "0",
            ]
        )
        assert code == 0, f"crawl of {root} failed"
    return base


def ranked_pages(library: Library, question: str, base: str) -> list[str]:
    pages: list[str] = []
    for hit in library.search(question, limit=DEPTH):
        path = hit.url.removeprefix(base)
        if path not in pages:
            pages.append(path)
    return pages


def score(library: Library, base: str, questions: list[tuple[str, list[str]]]) -> None:
    found, reciprocal, misses = 0, 0.0, []
    for question, answers in questions:
        pages = ranked_pages(library, question, base)
        rank = next((i for i, p in enumerate(pages, 1) if p in answers), None)
        found += rank is not None and rank <= 5
        reciprocal += 1 / rank if rank else 0.0
        if rank is None or rank > 5:
            misses.append(f"    miss: {question!r} → {pages[:3]} (want {answers[0]})")
    n = len(questions)
    print(f"  {n} questions: recall@5 {found / n:.3f}, MRR {reciprocal / n:.3f}")
    print("\n".join(misses))


def latency(libraries: list[Library], target: int, work: Path) -> None:
    pages = [p for library in libraries for s in library.snapshots() for p in library.pages(s)]
    big = Library(work / "big")
    copies = -(-target // len(pages))
    for copy in range(copies):
        batch = [LibraryPage(f"{p.url}?copy={copy}", p.title, p.markdown) for p in pages]
        snapshot = Snapshot(0, f"copy{copy}.example/", "1", "", "bench", 0.0, 0, 0, "")
        big.record(snapshot, batch[: max(0, target - copy * len(pages))])
    total = sum(s.pages for s in big.snapshots())
    questions = [q for _, (_, qs) in SITES.items() for q, _ in qs]
    big.search(questions[0])  # open the connection: an MCP server or CLI search has one
    timings, cpu = [], []
    for _ in range(5):
        for question in questions:
            start, start_cpu = time.perf_counter(), time.process_time()
            big.search(question, limit=10)
            timings.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
    timings.sort()
    p95 = timings[int(len(timings) * 0.95)]
    print(
        f"search latency over {total:,} pages ({len(timings)} searches): median "
        f"{statistics.median(timings):.1f} ms wall (p95 {p95:.1f} ms), "
        f"{statistics.median(cpu):.1f} ms CPU; load average {os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mdcrawl-retrieval-") as tmp:
        work, libraries = Path(tmp), []
        for name, (root, questions) in SITES.items():
            cache = work / name
            base = crawl_site(root, cache)
            library = Library(cache)
            print(f"{name}: {sum(s.pages for s in library.snapshots())} pages")
            score(library, base, questions)
            libraries.append(library)
        latency(libraries, args.pages, work)


if __name__ == "__main__":
    main()
