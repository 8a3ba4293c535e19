"""A pool worker's read of fetched pages, in one process: CPU by phase.

    python -m bench.reads --dir /usr/share/doc/rust-doc/html \
        --manifest /tmp/convert-out/rustcore-base/manifest.jsonl [--limit 2400]
    PYTHONPATH=/tmp/before/layers/common/python python -m bench.reads ...   (another tree)

What ``runtime/workers._read_in_worker`` does for each page of a fresh crawl once the
job's template has settled (body stored, links read, converted, cached, recorded,
chunked), on the pages a crawl kept (``--manifest``: its ``manifest.jsonl``, as
``bench.convert`` takes it) or the tree's first ``--limit`` HTML files, each pickled in
and its answer pickled out as the pool does. Prints the CPU of the whole read and of
each phase, and what is left outside conversion (parse, bounding and
``convert_document``): the share this bench exists to watch. Nothing is asserted; run
the trees one after the other, twice, on a quiet machine.
"""

from __future__ import annotations

import argparse
import gc
import pickle
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.convert import manifest_pages

# (module, function): the phases timed, by where ``reading``/``workers`` look them up.
PHASES = (
    ("mdcrawl.pipeline.reading", "store_body"),
    ("mdcrawl.document", "parse_unbounded"),
    ("mdcrawl.pipeline.reading", "tree_page_links"),
    ("mdcrawl.document", "bounded"),
    ("mdcrawl.pipeline.reading", "convert_document"),
    ("mdcrawl.pipeline.reading", "cache_converted"),
    ("mdcrawl.runtime.workers", "_chunk"),
)
CONVERSION = ("parse_unbounded", "bounded", "convert_document")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--manifest", type=Path)
    parser.add_argument("--limit", type=int, default=2400)
    args = parser.parse_args()
    pages = _pages(args.dir, args.manifest, args.limit)
    spent: Counter[str] = Counter()
    for module, name in PHASES:
        _timed(module, name, spent)
    with tempfile.TemporaryDirectory() as tmp:
        total = _read_all(pages, Path(tmp))
    outside = total - sum(spent[name] for name in CONVERSION)
    print(f"{len(pages)} pages: read CPU {total:.2f} s, outside conversion {outside:.2f} s")
    for name, seconds in spent.most_common():
        print(f"  {name:<18} {seconds:6.2f} s  {seconds / total:6.1%}")


def _pages(root: Path, manifest: Path | None, limit: int) -> list[tuple[str, bytes]]:
    if manifest is not None:
        return manifest_pages(root, manifest, limit)
    files = sorted(root.rglob("*.html"))[:limit]
    return [("http://127.0.0.1:8000/" + str(f.relative_to(root)), f.read_bytes()) for f in files]


def _timed(module_name: str, name: str, spent: Counter[str]) -> None:
    import importlib

    module = importlib.import_module(module_name)
    inner: Callable[..., Any] = getattr(module, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - began

    setattr(module, name, timed)


def _read_all(pages: list[tuple[str, bytes]], root: Path) -> float:
    """The worker's reads of ``pages`` into stores under ``root``: their CPU seconds."""
    from mdcrawl.adapters.local import open_local_stores
    from mdcrawl.models import CrawlOptions, FrontierItem, Job
    from mdcrawl.names import job_key
    from mdcrawl.pipeline import templating
    from mdcrawl.pipeline.reading import Fetched
    from mdcrawl.runtime import workers

    with open_local_stores(root) as stores:
        stores.jobs.create(Job("bench", pages[0][0], CrawlOptions()))
        settled = templating.NO_TEMPLATE_JSON.encode()  # settled: every page is recorded
        stores.blobs.put(job_key("bench", templating.TEMPLATE_NAME), settled)
        workers._worker_stores, workers._worker_deps = stores, workers.process_deps(stores)
        workers.warm_up()
        gc.freeze()  # as workerboot leaves a worker
        calls = []
        for n, (url, body) in enumerate(pages):
            item = FrontierItem(url=url, url_hash=f"h{n}", depth=1, order=n)
            calls.append(pickle.dumps(Fetched("bench", item, url, body, "text/html", None), 5))
        began = time.process_time()
        for call in calls:
            answer = workers._read_in_worker(pickle.loads(call))
            pickle.loads(pickle.dumps(answer, 5))
        return time.process_time() - began


if __name__ == "__main__":
    main()
