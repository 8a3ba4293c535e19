"""The CPU of what a fresh local crawl does after its pages are converted: finalize's
assembly (docs.md, pages/, llms.txt, manifest, llms-full.txt, chunks.jsonl) and the
library record, before and after, on one crawl of a site.

    git archive <commit> | tar -x -C /tmp/before
    python -m bench.assembly --base /tmp/before/layers/common/python [--site rustcore]
                             [--max-pages 2400] [--rounds 3] [--forked]

Crawls the site once (installed tree, fresh cache), then times, in a new process per
run and alternating the two trees, ``finalize``'s assembly of the crawled job into a new
folder and the record of the job into a new library (CPU of the process and its forked
children, and the assembly's wall time; ``--forked``: the pages rendered on every core
and their files written where rendered, as ``mdcrawl crawl`` does).
A tree's first run is a warm-up: it chunks again the pages whose chunks another tree's
code made (their keys name the chunking code). Prints the runs, then each tree's best
and the ratio; the two trees' outputs are compared byte for byte. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from inspect import signature
from pathlib import Path
from typing import Any

from bench.crawl import MAX_PAGES, SITES, START
from tests.support.server import serve_directory

MDCRAWL = str(Path(sys.executable).with_name("mdcrawl"))


def measure(cache: Path, out: Path, forked: bool) -> None:
    """One run (in its own process): assemble the cache's job into ``out``, record it
    into a library of its own; prints ``assembly <cpu> record <cpu> wall <assembly wall>``."""
    from mdcrawl import stored
    from mdcrawl.adapters.local import open_local_stores
    from mdcrawl.adapters.local.chunks import ChunkCache
    from mdcrawl.adapters.local.parallel import forked_page_map
    from mdcrawl.library import Library
    from mdcrawl.library.record import record_crawl
    from mdcrawl.pipeline import finalize as fin
    from mdcrawl.runtime.local import _open_output

    with open_local_stores(cache) as stores:
        job = stores.jobs.list_for_owner("local")[0]
        deps = fin.FinalizeDeps(
            stores.jobs, stores.frontier, stores.pages, stores.blobs, stores.events, stores.clock
        )
        listed = fin.without_duplicates(stores.pages.list(job.job_id))
        records = fin.with_settled_template(job.job_id, listed, deps)
        chunks = ChunkCache(stores.blobs)
        opener = lambda name: _open_output(out, name)  # noqa: E731
        # as ``mdcrawl crawl`` does: forked, each page's file written where it is rendered
        # (a tree whose finalize has no ``page_files`` writes them all here)
        where = [opener] if forked and "page_files" in signature(fin._assemble).parameters else []
        start, began = _cpu(), time.perf_counter()
        page_map = forked_page_map() if forked else None
        fin._assemble(job, records, stores.blobs, opener, chunks.lines, page_map, *where)
        assembled, wall = _cpu(), time.perf_counter() - began
        read = lambda key: stored.read_markdown(stores.blobs, key)  # noqa: E731
        chunker = chunk_reader(chunks)
        with tempfile.TemporaryDirectory() as library:
            pages = stores.pages.list(job.job_id)
            record_crawl(Library(Path(library)), job, pages, read, out, None, chunker)
            recorded = _cpu()
    print(f"assembly {assembled - start:.3f} record {recorded - assembled:.3f} wall {wall:.3f}")


def chunk_reader(chunks: Any) -> Any:
    """The library's chunker as ``mdcrawl crawl`` makes it, in the tree measured (an
    older one has no ``kept_chunks``: its chunks were read back as ``Chunk`` objects)."""
    from mdcrawl.library import record

    if hasattr(record, "kept_chunks"):
        return record.kept_chunks(chunks)
    return lambda page: chunks.chunks(page.url, page.title, page.markdown)


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _run(
    env: dict[str, str], cache: Path, out: Path, forked: bool
) -> tuple[float, float, float]:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "bench.assembly", "--measure", str(cache), str(out)]
    done = subprocess.run(
        cmd + (["--forked"] if forked else []), env=env, check=True, capture_output=True, text=True
    )
    words = done.stdout.split()
    return float(words[1]), float(words[3]), float(words[5])


def _same_tree(a: Path, b: Path) -> bool:
    compared = filecmp.dircmp(a, b)
    if compared.left_only or compared.right_only or compared.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, compared.common_files, shallow=False)
    if mismatch or errors:
        return False
    return all(_same_tree(a / d, b / d) for d in compared.common_dirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, help="the 'before' library root")
    parser.add_argument("--site", default="rustcore", choices=sorted(SITES))
    parser.add_argument("--max-pages", type=int)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--forked", action="store_true")
    parser.add_argument("--measure", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure, args.forked)
        return
    if args.base is None:
        parser.error("--base is required")
    trees = {"before": {**os.environ, "PYTHONPATH": str(args.base)}, "after": dict(os.environ)}
    max_pages = args.max_pages or MAX_PAGES.get(args.site, 5000)
    with tempfile.TemporaryDirectory() as tmp, serve_directory(SITES[args.site], 0.02) as server:
        work = Path(tmp)
        url = server.url(START.get(args.site, "/index.html"))
        crawl = [MDCRAWL, "crawl", url, "--out", str(work / "crawled"), "--cache-dir"]
        crawl += [str(work / "c"), "--quiet", "--max-pages", str(max_pages), "--budget", "3000"]
        subprocess.run(crawl, check=True, stdout=subprocess.DEVNULL)
        best: dict[str, tuple[float, float, float]] = {}
        for round_ in range(args.rounds + 1):  # round 0: each tree's warm-up
            for name, env in trees.items():
                assembly, record, wall = _run(env, work / "c", work / name, args.forked)
                load = Path("/proc/loadavg").read_text().split()[0]
                print(
                    f"{name:<6} round {round_} (load {load}): assembly CPU {assembly:6.2f} s"
                    f" wall {wall:5.2f} s | record CPU {record:5.2f} s"
                    f"{'  (warm-up)' if round_ == 0 else ''}",
                    flush=True,
                )
                if round_:
                    old = best.get(name, (float("inf"),) * 3)
                    best[name] = (min(old[0], assembly), min(old[1], record), min(old[2], wall))
                time.sleep(0.5)
        (b_asm, b_rec, b_wall), (a_asm, a_rec, a_wall) = best["before"], best["after"]
        print(
            f"best: assembly CPU {b_asm:.2f} -> {a_asm:.2f} s ({a_asm / b_asm:.2f}x), "
            f"wall {b_wall:.2f} -> {a_wall:.2f} s ({a_wall / b_wall:.2f}x), "
            f"record {b_rec:.2f} -> {a_rec:.2f} s ({a_rec / b_rec:.2f}x)"
        )
        same = _same_tree(work / "before", work / "after")
        print(f"outputs byte-identical: {same}")


if __name__ == "__main__":
    main()
