"""Assembly's pages rendered on every core (``assemble.PageMap``), for the local runtime.

After the crawl the pool workers have exited and the assembly would run on one core:
on an API reference of 2,400 small pages that is seconds of wall time with the other
core idle. ``forked_page_map`` renders the pages in this process and in forked
children, one per other core: a fork inherits the assembly's plan, link table and
readers as they are (nothing is pickled but each page's encoded result, which comes
back on a pipe of the child's own). The pages go in runs of ``PAGES_PER_TASK``: each
child claims the next unclaimed run (a counter shared with this process), and this
process, which also takes the results in page order and writes them, renders the next
unclaimed run itself whenever no child's result is waiting. So the share each process
renders follows from what each one costs (the serial part here, the file system, the
machine's load), and no thread runs beside the caller's. Where ``fork`` is missing
(Windows), or the pages are few, they all render here.

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
import multiprocessing.connection
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ...assemble import PageMap

MIN_PAGES = 64  # fewer: forking costs more than it saves
PAGES_PER_TASK = 8  # pages in a run (fewer pipe round trips)
PIPE_BYTES = 1 << 20  # a child's pipe (Linux lets any process widen one to 1 MiB)

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
    _render = render
    frozen_before = gc.get_freeze_count() > 0  # the CLI freezes what its imports made
    _shrink()
    try:
        with _Renderers(runs, workers - 1) as renderers:
            yield from renderers.in_order(render)
    finally:
        _render = None
        if not frozen_before:  # a program's own (mdcrawl.api): its collector as it was
            gc.unfreeze()


class _Renderers:
    """Forked children rendering runs of pages, each claiming the next run nobody has
    claimed (a counter they share with this process) and sending back its rendered pages
    on a pipe of its own. This process hands the runs out in order, rendering one itself
    whenever no child's is waiting: it also writes every page and does the passes'
    serial parts, and how much that is (and what a child costs) varies by site and
    machine, so the share each process renders follows from how fast each one goes.
    No thread runs here beside the caller's (nothing for the caller's work to wait on)."""

    def __init__(self, runs: list[range], children: int) -> None:
        context = multiprocessing.get_context("fork")
        self._runs, self._next = runs, context.Value("q", 0)
        self._done: dict[int, list[Any]] = {}  # run -> its pages, rendered ahead of time
        self._children: dict[Any, Any] = {}  # a child's results' pipe -> the child
        for _ in range(children):
            receiving, sending = context.Pipe(duplex=False)
            _widen(sending)
            process = context.Process(target=_child, args=(self._next, runs, sending))
            process.start()
            sending.close()
            self._children[receiving] = process

    def __enter__(self) -> _Renderers:
        return self

    def __exit__(self, *exc: object) -> None:
        for receiving, process in self._children.items():
            if exc[0] is not None:
                process.terminate()  # the map was left early: no page of it is wanted
            receiving.close()
            process.join()

    def in_order(self, render: Callable[[int], Any]) -> Iterator[Any]:
        for run in range(len(self._runs)):
            while run not in self._done:
                self._advance(render)
            yield from self._done.pop(run)

    def _advance(self, render: Callable[[int], Any]) -> None:
        """Take a child's finished run if one waits, else render the next unclaimed run
        here, else wait for a child."""
        waiting = [pipe for pipe in self._children if pipe.poll()]
        if not waiting:
            mine = _claim(self._next, len(self._runs))
            if mine is not None:
                self._done[mine] = [render(i) for i in self._runs[mine]]
                return
            if not self._children:
                raise RuntimeError("a run of pages was claimed and never rendered")
            waiting = multiprocessing.connection.wait(list(self._children))
        for pipe in waiting:
            self._take(pipe)

    def _take(self, pipe: Any) -> None:
        try:
            run, rendered, failure = pipe.recv()
        except EOFError:  # the child has gone: it exits once no run is left to claim
            process = self._children.pop(pipe)
            pipe.close()
            process.join()
            if process.exitcode != 0:  # killed (out of memory...) with a run claimed
                raise RuntimeError(f"a forked renderer died ({process.exitcode})") from None
            return
        if failure is not None:
            raise failure
        self._done[run] = rendered


def _child(counter: Any, runs: list[range], results: Any) -> None:
    """A forked renderer: claims runs until none is left, sends each back rendered."""
    assert _render is not None, "child forked without a render function"
    try:
        while (run := _claim(counter, len(runs))) is not None:
            try:
                rendered = [_render(i) for i in runs[run]]
            except Exception as failure:  # the assembly fails there, as it would here
                results.send((run, None, failure))
                return
            results.send((run, rendered, None))
    finally:
        results.close()


def _claim(counter: Any, runs: int) -> int | None:
    """The next run nobody has rendered yet, now this process's; None: all are taken."""
    with counter.get_lock():
        run = counter.value
        if run >= runs:
            return None
        counter.value = run + 1
    return run


def _widen(pipe: Any) -> None:
    """A pipe that holds a few runs' pages: a child finishing a run while this process
    renders one of its own goes on instead of waiting for it to read."""
    with contextlib.suppress(ImportError, AttributeError, OSError):  # Linux; else as is
        import fcntl

        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def _may_fork() -> bool:
    """``fork`` exists and this process runs one thread (above)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


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
