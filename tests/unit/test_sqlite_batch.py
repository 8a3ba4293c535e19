"""Database.batch: the writes of a batch of outcomes commit together or not at all, and
no other thread's write slips into (or is rolled back with) the batch."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from mdcrawl.adapters.local import LocalStores, open_local_stores
from mdcrawl.models import CrawlOptions, Job


@pytest.fixture
def stores(tmp_path: Path):
    with open_local_stores(tmp_path) as opened:
        opened.jobs.create(Job("j1", "http://docs.test/", CrawlOptions()))
        yield opened


def _crawled(stores: LocalStores) -> int:
    job = stores.jobs.get("j1")
    assert job is not None
    return job.counters.crawled


def test_a_batch_commits_its_writes_together(stores: LocalStores) -> None:
    with stores.db.batch():
        stores.jobs.add_counters("j1", crawled=1)
        stores.jobs.add_counters("j1", crawled=1)
        assert _crawled(stores) == 2  # the batch reads its own writes
    assert _crawled(stores) == 2


def test_a_failed_batch_leaves_nothing_behind(stores: LocalStores) -> None:
    with pytest.raises(RuntimeError), stores.db.batch():
        stores.jobs.add_counters("j1", crawled=1)
        with stores.db.batch():  # nested: part of the outer batch
            stores.jobs.add_counters("j1", crawled=1)
        raise RuntimeError("crashed half way")
    assert _crawled(stores) == 0


def test_another_threads_write_waits_for_the_batch_and_survives_its_failure(
    stores: LocalStores,
) -> None:
    started = threading.Event()

    def other() -> None:
        started.set()
        stores.jobs.add_counters("j1", crawled=10)

    with pytest.raises(RuntimeError), stores.db.batch():
        stores.jobs.add_counters("j1", crawled=1)
        thread = threading.Thread(target=other)
        thread.start()
        started.wait(5)
        time.sleep(0.2)  # give the other write every chance to land inside the batch
        raise RuntimeError("rolled back")
    thread.join(5)
    assert _crawled(stores) == 10
