"""Assembly's pages rendered on every core (``assemble.PageMap``), for the local runtime.

After the crawl the pool workers have exited and the assembly would run on one core:
on an API reference of 2,400 small pages that is seconds of wall time with the other
core idle. ``forked_page_map`` renders the pages in forked children instead: a fork
inherits the assembly's plan, link table and readers as they are (nothing to pickle
but each page's encoded result, which comes back in page order), and the parent only
writes. Where ``fork`` is missing (Windows), or the pages are few, they render here.

Forking is safe at this point of a run: the event loop and the fetcher are closed, and
the children only read blobs (files) and compute; they never touch SQLite.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator
from typing import Any

from ...assemble import PageMap

MIN_PAGES = 64  # fewer: forking costs more than it saves
PAGES_PER_TASK = 8  # pages sent to a child at once (fewer pipe round trips)

# The render function of the map under way: set before the children fork, so each
# inherits it (a fork shares the parent's memory; nothing is pickled but the index).
_render: Callable[[int], Any] | None = None


def forked_page_map(workers: int | None = None) -> PageMap:
    """A ``PageMap`` rendering in ``workers`` forked children (default: one per core)."""
    count = workers or os.cpu_count() or 1

    def page_map(render: Callable[[int], Any], pages: int) -> Iterator[Any]:
        if count < 2 or pages < MIN_PAGES or "fork" not in multiprocessing.get_all_start_methods():
            return map(render, range(pages))
        return _forked(render, pages, count)

    return page_map


def _forked(render: Callable[[int], Any], pages: int, workers: int) -> Iterator[Any]:
    global _render
    _render = render
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            yield from pool.imap(_render_one, range(pages), chunksize=PAGES_PER_TASK)
    finally:
        _render = None


def _render_one(index: int) -> Any:
    assert _render is not None, "child forked without a render function"
    return _render(index)
