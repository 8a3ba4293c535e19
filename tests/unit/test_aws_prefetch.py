"""Finalize's reads run concurrently and give back exactly what the store holds."""

from __future__ import annotations

import threading
import time

from mdcrawl.adapters.aws.prefetch import PrefetchedBlobs


class SlowStore:
    def __init__(self, data: dict[str, bytes]) -> None:
        self.data, self.gets, self.inflight, self.peak = data, [], 0, 0
        self.lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        with self.lock:
            self.gets.append(key)
            self.inflight += 1
            self.peak = max(self.peak, self.inflight)
        time.sleep(0.01)
        with self.lock:
            self.inflight -= 1
        return self.data.get(key)

    def link(self, key: str) -> str:
        return f"https://example/{key}"


def test_reads_are_concurrent_once_each_and_exact() -> None:
    data = {f"k{i}": (f"# page {i}\n" * 50).encode() for i in range(64)}
    store = SlowStore(data)
    keys = [*data, "gone"]
    blobs = PrefetchedBlobs(store, lambda: keys, workers=8)
    try:
        for _ in range(2):  # assembly reads every page twice
            assert all(blobs.get(k) == v for k, v in data.items())
        assert blobs.get("gone") is None
        assert blobs.get("other") is None  # not announced: read through
        assert blobs.link("k1") == "https://example/k1"
    finally:
        blobs.close()
    assert sorted(store.gets) == sorted([*keys, "other"])  # each key fetched once
    assert store.peak > 1


def test_a_page_written_during_finalize_is_read_back_new() -> None:
    """Finalize converts pages again once the job's template settles: reads after the
    write get the new markdown, not what was prefetched."""
    store = SlowStore({"k1": b"old"})

    def put(key: str, data: bytes, content_type: str = "") -> None:
        store.data[key] = data

    store.put = put  # type: ignore[attr-defined]
    blobs = PrefetchedBlobs(store, lambda: ["k1"], workers=2)
    try:
        assert blobs.get("k1") == b"old"
        blobs.put("k1", b"new", "text/markdown")
        assert blobs.get("k1") == b"new" and store.data["k1"] == b"new"
    finally:
        blobs.close()


def test_a_finalize_run_lists_the_jobs_records_once() -> None:
    from mdcrawl.adapters.aws.finalizing import ListedOnce

    class Pages:
        def __init__(self) -> None:
            self.lists = 0

        def list(self, job_id: str) -> list:
            self.lists += 1
            return [job_id]

    pages = Pages()
    once = ListedOnce(pages)
    first = once.list("j1")
    first.append("changed by a caller")
    assert once.list("j1") == ["j1"] and once.list("j2") == ["j2"]
    assert pages.lists == 2
