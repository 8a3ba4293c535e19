"""Finalize's reads, concurrent: assembly reads every page's markdown (twice) one
after another, ~20-60 ms of S3 round trip each, which alone would take a 10,000-page
job past the orchestrator's timeout. ``PrefetchedBlobs`` starts, on the first read,
GETs for every key the job will read, ``workers`` at a time in reading order, and keeps
the answers zlib-compressed (documentation markdown shrinks ~4x: 10,000 pages of
20 KB hold ~50 MB); ``get`` then waits for its own key only. Everything else (writes,
links, exists) goes straight to the wrapped store.

Over the packed content cache (``packs.PackedBlobs.planned_reads``) the keys are first
located together (one BatchGetItem per 100) and pages packed side by side come in one
ranged GET: a processor invocation packed its batch's pages in discovery order, which
is about the order finalize reads them in.
"""

from __future__ import annotations

import contextvars
import threading
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class PrefetchedBlobs:
    def __init__(self, inner: Any, keys: Callable[[], Iterable[str]], workers: int = 32) -> None:
        self._inner, self._keys, self._workers = inner, keys, workers
        self._futures: dict[str, Future[Any]] | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        future = self._started().get(key)
        if future is None:
            data: bytes | None = self._inner.get(key)
            return data
        packed = future.result()
        if isinstance(packed, dict):  # a run of packed keys, read together
            packed = packed[key]
        return None if packed is None else zlib.decompress(packed)

    def put(self, key: str, data: bytes, *args: Any, **kwargs: Any) -> Any:
        """A blob written during finalize (a page converted again with the job's template):
        later reads get the new bytes, not the prefetched old ones."""
        result = self._inner.put(key, data, *args, **kwargs)
        with self._lock:
            if self._futures is not None and key in self._futures:
                written: Future[bytes | None] = Future()
                written.set_result(zlib.compress(data, 1))
                self._futures[key] = written
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def _started(self) -> dict[str, Future[Any]]:
        with self._lock:
            if self._futures is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="prefetch")
                self._futures = {}
                keys = list(dict.fromkeys(self._keys()))
                plan = getattr(self._inner, "planned_reads", None)
                if plan is not None:
                    keys = self._start_runs(*plan(keys))
                for key in keys:
                    # Each task in a copy of the caller's context (tracing, logging keys).
                    run = contextvars.copy_context().run
                    self._futures[key] = self._pool.submit(run, self._fetch, key)
            return self._futures

    def _start_runs(self, runs: list[Any], missing: list[str], others: list[str]) -> list[str]:
        """A read per run of packed keys (each key's future answers the run's pieces);
        the keys left to read one by one."""
        assert self._pool is not None and self._futures is not None
        for key in missing:
            gone: Future[Any] = Future()
            gone.set_result(None)
            self._futures[key] = gone
        for keys_in_run in runs:
            run = contextvars.copy_context().run
            future = self._pool.submit(run, self._fetch_run, keys_in_run)
            for key, _ in keys_in_run:
                self._futures[key] = future
        return others

    def _fetch_run(self, run: Any) -> dict[str, bytes | None]:
        pieces: dict[str, bytes | None] = self._inner.read_run(run)
        return {k: None if v is None else zlib.compress(v, 1) for k, v in pieces.items()}

    def _fetch(self, key: str) -> bytes | None:
        data = self._inner.get(key)
        return None if data is None else zlib.compress(data, 1)
