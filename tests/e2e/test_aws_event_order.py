"""On the whole offline stack, the processor stores each invocation's events in one
write, and only after the records of the pages they announce: a client told
``page.done`` can read that page. Also when the invocation fails after recording some
pages: their events are stored all the same, and the redelivery announces no page twice.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
from mdcrawl.models import JobStatus
from mdcrawl.names import Table

from tests.e2e.test_aws_faults import assert_consistent, finished
from tests.e2e.test_aws_pipeline import start_job
from tests.support.server import RunningServer
from tests.support.sfn import FakeContext, OfflineStack
from tests.support.sites import Site

pytestmark = pytest.mark.slow


class Writes:
    """Every write to the pages and events tables, in the order they were sent."""

    def __init__(self, stack: OfflineStack) -> None:
        self.tables = {stack.aws.names[Table.PAGES]: "pages", stack.aws.names[Table.EVENTS]:
                       "events"}
        self.order: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()
        stack.aws.session.events.register("provide-client-params.dynamodb.PutItem", self.put)
        stack.aws.session.events.register(
            "provide-client-params.dynamodb.BatchWriteItem", self.batch
        )

    def put(self, params: dict[str, Any], **_: Any) -> None:
        self._add(params["TableName"], params["Item"])

    def batch(self, params: dict[str, Any], **_: Any) -> None:
        for table, requests in params["RequestItems"].items():
            for request in requests:
                if "PutRequest" in request:
                    self._add(table, request["PutRequest"]["Item"])

    def _add(self, table: str, item: dict[str, Any]) -> None:
        if table in self.tables:
            with self.lock:
                self.order.append((self.tables[table], item))

    def first_write(self) -> tuple[dict[str, int], dict[int, int]]:
        """(url_hash -> index of its record's first put, seq -> index of the put of
        the item holding it)."""
        records: dict[str, int] = {}
        events: dict[int, int] = {}
        for index, (table, item) in enumerate(self.order):
            if table == "pages":
                records.setdefault(item["url_hash"]["S"], index)
            else:
                first, count = int(item["seq"]["N"]), int(item.get("count", {"N": "1"})["N"])
                for seq in range(first, first + count):
                    events.setdefault(seq, index)
        return records, events


def page_events_after_records(stack: OfflineStack, job_id: str, writes: Writes) -> None:
    records, written = writes.first_write()
    hashes = {r.url: r.url_hash for r in stack.stores.pages.list(job_id)}
    page_events = [e for e in stack.stores.events.after(job_id, 0, 100_000)
                   if e.type in ("page.done", "page.failed")]
    assert page_events
    for event in page_events:
        url_hash = hashes[event.data["url"]]
        if url_hash in records:  # recorded by the processor (not by the orchestrator)
            assert records[url_hash] < written[event.seq], event


def test_a_processor_invocation_stores_its_events_once_after_its_records(
    stack: OfflineStack, server: RunningServer, site: Site
) -> None:
    writes = Writes(stack)
    job_id = start_job(stack, server.url(site.start))
    finished(stack, job_id)
    assert stack.stores.jobs.get(job_id).status is JobStatus.COMPLETED
    assert_consistent(stack, job_id)
    page_events_after_records(stack, job_id, writes)
    # Several pages' events per item: fewer event writes than page events.
    items = sum(1 for table, _ in writes.order if table == "events")
    events = len(stack.stores.events.after(job_id, 0, 100_000))
    assert items < events


def test_a_processor_failing_after_recording_pages_still_announces_them_once(
    stack: OfflineStack, server: RunningServer, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first delivery of each multi-page event raises after its second record (its
    events must still be stored: the redelivery skips recorded pages); Lambda then
    delivers it again."""
    writes = Writes(stack)
    runtime = stack.runtimes["processor"]
    failed: Counter[str] = Counter()

    def fails_after_two(number: int, event: dict[str, Any]) -> None:
        pages = event.get("pages", [event])
        if len(pages) < 3 or failed[pages[0]["url_hash"]]:
            return None  # delivered normally
        failed[pages[0]["url_hash"]] += 1
        pages_store = runtime.processor.pages
        put = pages_store.put
        recorded = [0]

        def put_then_crash(record: Any) -> bool:
            if recorded[0] == 2:
                raise RuntimeError("the processor crashed on its third page")
            recorded[0] += 1
            return bool(put(record))

        with monkeypatch.context() as patch:
            patch.setattr(pages_store, "put", put_then_crash)
            with pytest.raises(RuntimeError):
                stack.modules["processor"].lambda_handler(event, FakeContext("processor"))
        return None  # then Lambda's retry: the same event again

    stack.faults.rules["processor"] = fails_after_two
    job_id = start_job(stack, server.url(site.start))
    finished(stack, job_id)
    assert sum(failed.values()) >= 1
    assert stack.stores.jobs.get(job_id).status is JobStatus.COMPLETED
    assert_consistent(stack, job_id)  # every page's event exactly once, gap-free
    page_events_after_records(stack, job_id, writes)
