"""Assembly's pages rendered on every core (``assemble.PageMap``), for the local runtime.

After the crawl the pool workers have exited and the assembly would run on one core:
on an API reference of 2,400 small pages that is seconds of wall time with the other
core idle. ``forked_page_map`` renders the pages in this process and in forked
children, one per other core: a fork inherits the assembly's plan, link table and
readers as they are (nothing is pickled but each page's encoded result, which comes
back in page order), and the pages are dealt out in runs of ``PAGES_PER_TASK``, one
run in ``cores + 1`` rendered here. Where ``fork`` is missing (Windows), or the pages are
few, they all render here.

Memory: a forked child shares this process's pages, but each is counted whole in the
resident size of both. So the garbage of the crawl is collected and the freed heap
handed back to the system (``malloc_trim``) before the fork, and the survivors frozen
(``gc.freeze``) so that the children's collections never touch, and copy, them; they
are unfrozen after, unless the process froze its own before (the CLI does, at start).

Forking is safe at this point of a run: the event loop and the fetcher are closed, and
the children only read blobs (files) and compute; they never touch SQLite. A process
running other threads (``mdcrawl serve``'s crawls for MCP, a program calling
``mdcrawl.api.crawl`` from a thread) never forks: a lock another thread held at the
fork would stay held in the child. It renders every page itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ...assemble import PageMap

MIN_PAGES = 64  # fewer: forking costs more than it saves
PAGES_PER_TASK = 8  # pages in a run (fewer pipe round trips)

# The render function of the map under way: set before the children fork, so each
# inherits it (a fork shares the parent's memory; nothing is pickled but the index).
_render: Callable[[int], Any] | None = None
_shrunk = False  # collected and trimmed once already (``_shrink``)


def forked_page_map(workers: int | None = None) -> PageMap:
    """A ``PageMap`` rendering on ``workers`` processes, this one included (default:
    one per core)."""
    count = workers or os.cpu_count() or 1

    def page_map(render: Callable[[int], Any], pages: int) -> Iterator[Any]:
        if count < 2 or pages < MIN_PAGES or not _may_fork():
            return map(render, range(pages))
        return _forked(render, pages, count)

    return page_map


def _forked(render: Callable[[int], Any], pages: int, workers: int) -> Iterator[Any]:
    global _render
    runs = [
        range(start, min(start + PAGES_PER_TASK, pages))
        for start in range(0, pages, PAGES_PER_TASK)
    ]
    # This process also writes every page and does the passes' serial parts: it renders
    # fewer runs than each child (one in cores + 1).
    here = {k for k in range(len(runs)) if k % (workers + 1) == 0}
    theirs = [i for k, run in enumerate(runs) if k not in here for i in run]
    _render = render
    frozen_before = gc.get_freeze_count() > 0  # the CLI freezes what its imports made
    _shrink()
    try:
        with multiprocessing.get_context("fork").Pool(workers - 1) as pool:
            answers = pool.imap(_render_one, theirs, chunksize=PAGES_PER_TASK)
            for k, run in enumerate(runs):
                if k in here:
                    yield from map(render, run)
                else:
                    yield from (next(answers) for _ in run)
    finally:
        _render = None
        if not frozen_before:  # a program's own (mdcrawl.api): its collector as it was
            gc.unfreeze()


def _may_fork() -> bool:
    """``fork`` exists and this process runs one thread (above)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _render_one(index: int) -> Any:
    assert _render is not None, "child forked without a render function"
    return _render(index)


def _shrink() -> None:
    """Collect, give the freed heap back to the system, freeze what is left (above).
    The full collection only before a process's first fork (a crawl's heap takes a
    while to walk); later forks freeze what there is as it is."""
    global _shrunk
    if not _shrunk:
        _shrunk = True
        gc.collect()
        with contextlib.suppress(AttributeError, OSError):  # glibc only: else, no trim
            ctypes.CDLL(None).malloc_trim(0)
    gc.freeze()
