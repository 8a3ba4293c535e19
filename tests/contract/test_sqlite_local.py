"""What only the local stores promise: several processes on one database file,
crash safety at any instant, the schema version, the folder layout, file blobs."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mdcrawl.adapters.local import open_local_stores
from mdcrawl.adapters.local.schema import SCHEMA_VERSION, V1
from mdcrawl.adapters.local.stores import DB_NAME
from mdcrawl.errors import StoreError
from mdcrawl.models import Counters, EventType, UrlState

from . import sqlite_workers
from .builders import cache_entry, item, job

SPAWN = multiprocessing.get_context("spawn")  # clean children, like a process pool's
WORKERS = 4
WAIT_S = 120  # generous bound on waiting for a child: a hang fails instead of blocking


def run_together(target: Callable[..., None], *args: Any) -> None:
    """Run ``target(*args, barrier)`` in WORKERS processes released at the same time."""
    barrier = SPAWN.Barrier(WORKERS)
    processes = [SPAWN.Process(target=target, args=(*args, barrier)) for _ in range(WORKERS)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(WAIT_S)
    assert [p.exitcode for p in processes] == [0] * WORKERS


def kill_when_ready(target: Callable[..., None], *args: Any) -> None:
    ready = SPAWN.Queue()
    process = SPAWN.Process(target=target, args=(*args, ready))
    process.start()
    assert ready.get(timeout=WAIT_S) == "ready"
    os.kill(process.pid, signal.SIGKILL)
    process.join(WAIT_S)
    assert process.exitcode == -signal.SIGKILL


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def test_counters_from_several_processes_lose_nothing(root):
    with open_local_stores(root) as stores:
        stores.jobs.create(job())
        run_together(sqlite_workers.bump_counters, root, "job-1", 50)
        assert stores.jobs.get("job-1").counters == Counters(
            processed=WORKERS * 50, words=WORKERS * 150
        )


def test_event_seq_is_gap_free_with_appenders_in_several_processes(root):
    run_together(sqlite_workers.append_events, root, "job-1", 40)
    with open_local_stores(root) as stores:
        seqs = [event.seq for event in stores.events.after("job-1", limit=10_000)]
    assert seqs == list(range(1, WORKERS * 40 + 1))


def test_processes_claiming_one_frontier_never_share_an_item(root):
    with open_local_stores(root) as stores:
        stores.frontier.add("job-1", [item(f"p{n}") for n in range(60)])
    results = SPAWN.Queue()
    run_together(sqlite_workers.claim_until_empty, root, "job-1", results)
    claimed = [h for _ in range(WORKERS) for h in results.get(timeout=WAIT_S)]
    assert len(claimed) == len(set(claimed)) == 60
    with open_local_stores(root) as stores:
        assert stores.frontier.counts("job-1")[UrlState.DONE] == 60


def test_threads_with_their_own_connections_lose_no_counter(root):
    with open_local_stores(root) as stores:
        stores.jobs.create(job())

    def bump(_: int) -> None:
        with open_local_stores(root) as own:
            for _ in range(20):
                own.jobs.add_counters("job-1", crawled=1)

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(bump, range(6)))
    with open_local_stores(root) as stores:
        assert stores.jobs.get("job-1").counters.crawled == 120


def test_a_kill_mid_stream_of_writes_leaves_a_consistent_database(root):
    kill_when_ready(sqlite_workers.append_events_forever, root, "job-1")
    with open_local_stores(root) as stores:
        seqs = [event.seq for event in stores.events.after("job-1", limit=1_000_000)]
        assert len(seqs) >= 20
        assert seqs == list(range(1, len(seqs) + 1))
        assert stores.events.append("job-1", EventType.JOB_FAILED, {}, 0.0).seq == len(seqs) + 1
        assert stores.db.query("PRAGMA integrity_check")[0][0] == "ok"


def test_a_kill_mid_blob_leaves_no_half_written_object(root):
    kill_when_ready(sqlite_workers.stream_blob_then_hang, root, "jobs/job-1/docs.md")
    with open_local_stores(root) as stores:
        assert stores.blobs.get("jobs/job-1/docs.md") is None
        stores.blobs.put("jobs/job-1/docs.md", b"# Done")
        assert stores.blobs.get("jobs/job-1/docs.md") == b"# Done"


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_reopens_instead_of_sharing_the_parent_connection(root):
    with open_local_stores(root) as stores:
        stores.jobs.create(job())
        stores.jobs.add_counters("job-1", crawled=1)  # the parent's connection is open
        child = multiprocessing.get_context("fork").Process(
            target=stores.jobs.add_counters, args=("job-1",), kwargs={"crawled": 10}
        )
        child.start()
        child.join(WAIT_S)
        assert child.exitcode == 0
        assert stores.jobs.add_counters("job-1", crawled=100).crawled == 111


def test_open_creates_the_layout_and_the_current_schema(root):
    with open_local_stores(root) as stores:
        stores.blobs.put("jobs/job-1/docs.md", b"# Docs")
        mode = stores.db.query("PRAGMA journal_mode")[0][0]
        version = stores.db.query("PRAGMA user_version")[0][0]
    assert (mode, version) == ("wal", SCHEMA_VERSION)
    assert (root / DB_NAME).is_file()
    assert (root / "blobs" / "jobs" / "job-1" / "docs.md").read_bytes() == b"# Docs"


def test_data_survives_closing_and_reopening(root):
    with open_local_stores(root) as stores:
        stores.jobs.create(job())
        stores.frontier.add("job-1", [item("a")])
    with open_local_stores(root) as stores:
        assert stores.jobs.get("job-1") == job()
        assert [i.url for i in stores.frontier.items("job-1")] == [item("a").url]


def test_a_database_of_the_first_schema_is_migrated_with_its_data(root):
    root.mkdir(parents=True)
    with sqlite3.connect(root / DB_NAME) as conn:  # as mdcrawl wrote it before V2
        for statement in V1:
            conn.execute(statement)
        conn.execute("PRAGMA user_version = 1")
    with open_local_stores(root) as stores:
        stores.jobs.create(job())
        stores.frontier.add("job-1", [item("a")])
        stores.frontier.note_overflow("job-1", ["h1", "h2"])
    with open_local_stores(root) as stores:
        version = stores.db.query("PRAGMA user_version")[0][0]
        assert (version, stores.frontier.overflow("job-1")) == (SCHEMA_VERSION, 2)
        assert [i.url for i in stores.frontier.items("job-1")] == [item("a").url]


def test_a_database_from_a_newer_mdcrawl_is_refused(root):
    open_local_stores(root).close()
    with sqlite3.connect(root / DB_NAME) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="schema version"):
        open_local_stores(root)


def test_a_corrupt_database_file_raises_store_error(root):
    root.mkdir(parents=True)
    (root / DB_NAME).write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError):
        open_local_stores(root)


def test_blob_link_is_a_file_url_to_the_bytes(root):
    with open_local_stores(root) as stores:
        stores.blobs.put("jobs/job-1/docs.md", b"# Docs")
        link = stores.blobs.link("jobs/job-1/docs.md")
    assert link.startswith("file://")
    assert Path(link.removeprefix("file://")).read_bytes() == b"# Docs"


@pytest.mark.parametrize("key", ["", "/etc/passwd", "../outside", "jobs/../../outside"])
def test_blob_keys_cannot_leave_the_root(root, key):
    with open_local_stores(root) as stores, pytest.raises(ValueError):
        stores.blobs.put(key, b"x")


def test_the_system_clock_reads_the_wall_clock(root):
    import time

    with open_local_stores(root) as stores:
        before = time.time()
        now = stores.clock.now()
        assert before <= now <= time.time()


def test_a_listing_sees_what_another_connection_wrote_since_the_last_one(root):
    """``SqlitePageStore.list`` keeps what it decoded until the database changes: a
    record another process (a pool worker) or this connection writes shows at once."""
    from mdcrawl.models import PageRecord, PageStatus

    with open_local_stores(root) as mine, open_local_stores(root) as worker:
        mine.pages.put(PageRecord("j", "u1", "h1", PageStatus.OK, 1))
        assert [r.url for r in mine.pages.list("j")] == ["u1"]
        worker.pages.put(PageRecord("j", "u2", "h2", PageStatus.OK, 2))
        assert [r.url for r in mine.pages.list("j")] == ["u1", "u2"]
        mine.pages.put(PageRecord("j", "u3", "h3", PageStatus.OK, 3))
        assert [r.url for r in mine.pages.list("j")] == ["u1", "u2", "u3"]
        assert mine.pages.list("other") == []
        listed = mine.pages.list("j")
        listed.clear()  # a caller's list is its own
        assert len(mine.pages.list("j")) == 3


def test_a_cache_entry_is_written_with_the_next_transaction(root):
    """A put costs no transaction of its own: it joins this process's next one (the
    orchestrator's batch of outcomes), and its own process reads it at once."""
    entry = cache_entry("page")
    with open_local_stores(root) as writer, open_local_stores(root) as other:
        writer.jobs.create(job())
        writer.cache.put(entry)
        assert writer.cache.get(entry.url_hash) == entry
        assert other.cache.get(entry.url_hash) is None  # waiting: a kill -9 loses it
        with writer.db.batch():
            writer.jobs.add_counters(job().job_id, crawled=1)
        assert other.cache.get(entry.url_hash) == entry


def test_a_cache_entry_still_waiting_is_written_on_close(root):
    newer = replace(cache_entry("page"), etag='"v2"')
    with open_local_stores(root) as writer:
        writer.cache.put(cache_entry("page"))
        writer.cache.put(newer)  # the latest put wins
    with open_local_stores(root) as reader:
        assert reader.cache.get(newer.url_hash) == newer


def test_a_batch_rolled_back_takes_its_cache_entries_with_it(root):
    """Both or neither: the entries that joined a batch are lost with it, as the batch's
    own writes are (a cache miss later, never an entry the database half has)."""
    entry = cache_entry("page")
    with open_local_stores(root) as writer:
        writer.cache.put(entry)
        with pytest.raises(RuntimeError), writer.db.batch():
            raise RuntimeError("the batch fails")
    with open_local_stores(root) as reader:
        assert reader.cache.get(entry.url_hash) is None
