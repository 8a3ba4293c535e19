"""The job's deadline for the requests made in one context (pure: the standard library).

The crawl step sets it around a batch (``fetch_deadline(request.deadline)``); asyncio tasks
started inside inherit it, and ``fetch.HttpxFetcher`` cuts every attempt and every wait
to ``time_left()``. A context variable rather than a parameter: the ``Fetcher`` port and
its test doubles stay as they are, and robots.txt and sitemap requests, made deep inside
the fetcher, are bounded as well.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar

_DEADLINE: ContextVar[float | None] = ContextVar("mdcrawl_fetch_deadline", default=None)


@contextlib.contextmanager
def fetch_deadline(deadline: float | None) -> Iterator[None]:
    """Requests (and waits) started in this block, and in tasks it starts, end by
    ``deadline`` (``time.time()`` seconds, the clock jobs use; None: no deadline)."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def time_left() -> float | None:
    """Seconds until the current deadline (negative once past), None without one."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.time()
