"""Faults, each on the whole offline stack (synthesized state machine + real handlers):
failing crawler calls, a duplicated processor event, an orchestrator that dies in the
middle of a batch, a cancel mid-crawl, a reconnecting subscriber, a stale connection."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from typing import Any

import pytest
from mdcrawl.adapters.aws.packs import LOCATOR
from mdcrawl.models import JobStatus, PageStatus, UrlState
from mdcrawl.pipeline import rehand

from tests.e2e.conftest import Subscriber
from tests.e2e.test_aws_pipeline import start_job
from tests.support.server import RunningServer
from tests.support.sfn import (
    FakeContext,
    OfflineStack,
    error_named,
    rule_input,
    synthesized_template,
)
from tests.support.sites import Site

pytestmark = pytest.mark.slow


def finished(stack: OfflineStack, job_id: str) -> dict[str, Any]:
    execution = stack.wait(job_id)
    failures = [
        e.get("lambdaFunctionFailedEventDetails") or e.get("taskFailedEventDetails")
        for e in stack.history(job_id)
        if "Failed" in e["type"]
    ]
    assert execution["status"] == "SUCCEEDED", failures
    return execution


def assert_consistent(stack: OfflineStack, job_id: str) -> list[Any]:
    """Every URL settled, one record each, counters equal to what the records say,
    one event per page, and the event log gap-free."""
    st = stack.stores
    items = st.frontier.items(job_id)
    records = st.pages.list(job_id)
    assert all(i.state not in (UrlState.PENDING, UrlState.LEASED) for i in items)
    assert sorted(r.url_hash for r in records) == sorted(i.url_hash for i in items)
    ok = [r for r in records if r.status is PageStatus.OK]
    job = st.jobs.get(job_id)
    c = job.counters
    assert c.crawled == sum(1 for i in items if i.state is UrlState.DONE)
    assert c.processed == len(ok) + sum(1 for r in records if r.reason == "conversion_error")
    assert c.words == sum(r.words for r in ok)
    assert c.discovered == len(items)
    events = st.events.after(job_id, 0, 100_000)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    done = Counter(e.data["url"] for e in events if e.type == "page.done")
    assert all(n == 1 for n in done.values()) and len(done) == len(ok)
    return ok


def test_failing_or_timed_out_crawler_calls_are_retried(
    stack: OfflineStack, server: RunningServer, site: Site
) -> None:
    def flaky(number: int, event: dict[str, Any]) -> None:
        if number in (2, 3):
            raise error_named("Sandbox.Timedout", "Task timed out after 60.00 seconds")
        if any(i["url"].endswith("/api.html") for i in event["items"]):
            raise error_named("Runtime.ExitError", "the crawler crashed on this batch")

    stack.faults.rules["crawler"] = flaky
    job_id = start_job(stack, server.url(site.start))
    finished(stack, job_id)
    job = stack.stores.jobs.get(job_id)
    assert job.status is JobStatus.COMPLETED
    ok = assert_consistent(stack, job_id)
    items = {i.url.rsplit("/", 1)[-1]: i for i in stack.stores.frontier.items(job_id)}
    poisoned = items["api.html"]
    assert poisoned.state is UrlState.FAILED and poisoned.attempts == 3
    assert poisoned.reason == "crawler_error"
    assert stack.stores.pages.get(job_id, poisoned.url_hash).status is PageStatus.FAILED
    # Retried URLs go alone, so the batch-mates of the crashing page are crawled on
    # their own and only the page that crashes the crawler fails.
    failed = [i for i in items.values() if i.state is UrlState.FAILED]
    assert [i.url for i in failed] == [poisoned.url]
    assert len(ok) == len(items) - 1
    # The batches that timed out came back and were crawled on a later call.
    assert any(i.attempts >= 1 and i.state is UrlState.DONE for i in items.values())


def test_a_processor_event_delivered_twice_changes_nothing_twice(
    stack: OfflineStack, server: RunningServer, site: Site
) -> None:
    page_puts: Counter[str] = Counter()

    def count_put(params: dict[str, Any], **_: Any) -> None:
        page_puts[params["Key"]] += 1

    def count_packed(params: dict[str, Any], **_: Any) -> None:
        # A cache document is stored inside a pack: its locator says where (packs.py).
        for requests in params["RequestItems"].values():
            for request in requests:
                key = request.get("PutRequest", {}).get("Item", {}).get("url_hash", {})
                if key.get("S", "").startswith(LOCATOR):
                    page_puts[key["S"].removeprefix(LOCATOR)] += 1

    stack.aws.session.events.register("provide-client-params.s3.PutObject", count_put)
    stack.aws.session.events.register("provide-client-params.dynamodb.BatchWriteItem", count_packed)

    delivered: Counter[str] = Counter()

    def twice(number: int, event: dict[str, Any]) -> None:
        for page in event.get("pages", [event]):  # one event per crawl batch
            delivered[page["url_hash"]] += 1
        stack.modules["processor"].lambda_handler(event, FakeContext("processor"))
        return None  # then the normal delivery: the same event a second time

    stack.faults.rules["processor"] = twice
    job_id = start_job(stack, server.url(site.start))
    finished(stack, job_id)
    ok = assert_consistent(stack, job_id)
    assert delivered == {r.url_hash: 1 for r in ok}  # each page: two deliveries
    # A record points at the markdown cache's document (stored.py): written once, and
    # no copy per job at all.
    markdown = {r.markdown_key for r in ok}
    assert {k: page_puts[k] for k in markdown} == dict.fromkeys(markdown, 1)
    assert not [k for k in page_puts if k.startswith(f"jobs/{job_id}/pages/")]


def test_an_orchestrator_dying_mid_batch_resumes_from_dynamodb(
    stack: OfflineStack, server: RunningServer, site: Site
) -> None:
    runtime = stack.runtimes["orchestrator"]
    real_clock = runtime.stores.clock

    class DyingClock:
        armed_at: int | None = None  # crawler calls seen when armed
        died = False

        def now(self) -> float:
            calls = stack.faults.calls.get("crawler", 0)
            if self.armed_at is not None and not self.died and calls >= self.armed_at + 3:
                self.died = True  # the slice dies with crawls in flight and leases held
                raise error_named("Lambda.ServiceException", "the orchestrator's host died")
            return real_clock.now()

    clock = DyingClock()
    runtime.stores.clock = clock  # before the orchestrator's ports are first built
    url = server.url(site.start)
    clean = start_job(stack, url, max_age_s=0)
    finished(stack, clean)
    reference = sorted(r.url for r in stack.stores.pages.list(clean))

    clock.armed_at = stack.faults.calls.get("crawler", 0)
    job_id = start_job(stack, url, max_age_s=0)
    finished(stack, job_id)
    assert clock.died
    failures = [e for e in stack.history(job_id) if e["type"] == "LambdaFunctionFailed"]
    assert len(failures) == 1
    assert stack.stores.jobs.get(job_id).status is JobStatus.COMPLETED
    assert_consistent(stack, job_id)
    assert sorted(r.url for r in stack.stores.pages.list(job_id)) == reference


def test_a_cancel_mid_crawl_stops_the_job(
    stack: OfflineStack, server: RunningServer, site: Site
) -> None:
    subscriber = Subscriber(stack, "conn-cancel")
    assert subscriber.connect() == 200
    job: dict[str, str] = {}

    def cancel_on_third(number: int, event: dict[str, Any]) -> None:
        if number == 3:
            answer = stack.api("POST", f"/jobs/{job['id']}/cancel")
            assert answer["statusCode"] in (200, 202), answer

    stack.faults.rules["crawler"] = cancel_on_third
    job["id"] = job_id = start_job(stack, server.url(site.start))
    subscriber.subscribe(job_id, after=0)
    finished(stack, job_id)
    stored = stack.stores.jobs.get(job_id)
    assert stored.status is JobStatus.CANCELLED
    events = subscriber.pump()
    types = [e["type"] for e in events]
    assert types[-1] == "job.cancelled" and "job.completed" not in types
    assert stack.faults.calls["crawler"] < 10  # it stopped claiming
    assert stack.api("GET", f"/jobs/{job_id}")["statusCode"] == 200


def test_reconnect_with_after_and_a_stale_connection(
    stack: OfflineStack, server: RunningServer, site: Site
) -> None:
    steady, flaky = Subscriber(stack, "conn-steady"), Subscriber(stack, "conn-flaky")
    assert steady.connect() == 200 and flaky.connect() == 200
    assert Subscriber(stack, "conn-bad").connect(api_key="not-a-key") == 403
    job: dict[str, str] = {}
    subscribed = threading.Event()

    def drop_on_fourth(number: int, event: dict[str, Any]) -> None:
        if number == 4:
            # The execution runs on its own: on a fast machine the fourth crawl comes
            # before the test subscribes. The drop must come after the client was sent
            # events, not only its "subscribed" answer (waited for here, in the crawler's
            # thread, without an AWS call of its own).
            assert subscribed.wait(timeout=120)
            deadline = time.monotonic() + 120
            while not was_sent_events("conn-flaky") and time.monotonic() < deadline:
                time.sleep(0.05)
            flaky.drop()  # gone without $disconnect: the next push finds it stale

    def was_sent_events(connection_id: str) -> bool:
        sent = list(stack.ws.messages[connection_id])
        return any(json.loads(m).get("type") == "events" for m in sent)

    stack.faults.rules["crawler"] = drop_on_fourth
    job["id"] = job_id = start_job(stack, server.url(site.start))
    steady.subscribe(job_id, after=0)
    flaky.subscribe(job_id, after=0)
    subscribed.set()
    finished(stack, job_id)

    everything = [e.to_dict() for e in stack.stores.events.after(job_id, 0, 100_000)]
    assert steady.pump() == everything  # the stale neighbour cost it nothing
    seen = flaky.pump()
    assert 0 < len(seen) < len(everything)
    assert "conn-flaky" not in stack.stores.connections.for_job(job_id)

    back = Subscriber(stack, "conn-flaky-2")
    back.cursor.last = seen[-1]["seq"]
    assert back.connect() == 200
    back.subscribe(job_id)  # after = the last seq it handled
    missed = back.pump()
    assert missed == everything[len(seen):]
    assert seen + missed == everything
    assert json.loads(stack.ws.messages["conn-flaky-2"][0])["type"] == "subscribed"


def test_an_execution_that_ends_without_the_job_ending_fails_the_job(
    stack: OfflineStack, server: RunningServer, site: Site
) -> None:
    """Orchestrate fails and so does MarkFailed: the execution FAILED with the job still
    active. Step Functions' status-change event, through the synthesized EventBridge
    rule, makes the orchestrator mark it failed and announce job.failed, once."""
    stack.faults.rules["orchestrator"] = lambda number, event: (_ for _ in ()).throw(
        error_named("Boom", "the orchestrator cannot run")
    )
    job_id = start_job(stack, server.url(site.start))
    assert stack.wait(job_id)["status"] == "FAILED"
    assert not stack.stores.jobs.get(job_id).status.terminal
    stack.faults.rules.clear()

    change = {"source": "aws.states", "detail-type": "Step Functions Execution Status Change",
              "detail": {"name": job_id, "status": "FAILED",
                         "executionArn": stack.execution_arn(job_id)}}
    event = rule_input(synthesized_template(), "PipelineJobsEndedBadly", change)
    for _ in range(2):  # EventBridge delivers at least once
        stack.invoke("orchestrator", event)
    job = stack.stores.jobs.get(job_id)
    assert job.status is JobStatus.FAILED and "FAILED" in (job.error or "")
    types = [e.type for e in stack.stores.events.after(job_id, 0, 1000)]
    assert types.count("job.failed") == 1 and types[-1] == "job.failed"


def test_a_page_that_kills_the_processor_every_time_fails_alone(
    stack: OfflineStack, server: RunningServer, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-handed to the processor a capped number of times, then recorded as failed
    (processor_failed): the job completes instead of waiting for its execution timeout."""
    monkeypatch.setattr(rehand, "REPROCESS_AFTER_S", 0.0)
    deliveries: Counter[str] = Counter()

    def dies_on_api(number: int, event: dict[str, Any]) -> None:
        # A batch holding the page dies with it; re-handed, its batch-mates go alone.
        for url in (page["url"] for page in event.get("pages", [event])):
            if url.endswith("/api.html") and set(deliveries) <= {url}:  # one page only
                deliveries[url] += 1
                raise error_named("Runtime.ExitError", "out of memory")

    stack.faults.rules["processor"] = dies_on_api
    job_id = start_job(stack, server.url(site.start))
    finished(stack, job_id)
    assert stack.stores.jobs.get(job_id).status is JobStatus.COMPLETED
    (url,) = deliveries
    assert deliveries[url] == 1 + rehand.MAX_REHANDS
    records = {r.url: r for r in stack.stores.pages.list(job_id)}
    assert records[url].status is PageStatus.FAILED and records[url].reason == "processor_failed"
    failed = [e for e in stack.stores.events.after(job_id, 0, 10_000) if e.type == "page.failed"]
    assert [e.data["reason"] for e in failed] == ["processor_failed"]


def test_cancelling_a_queued_job_announces_it(
    stack: OfflineStack, server: RunningServer, site: Site
) -> None:
    """The orchestrator is held before its first slice: the job is still queued when the
    cancel arrives, so the api ends it and pushes job.cancelled to its subscriber."""
    import threading

    gate = threading.Event()
    stack.faults.rules["orchestrator"] = lambda number, event: gate.wait(60) and None
    subscriber = Subscriber(stack, "conn-queued")
    assert subscriber.connect() == 200
    job_id = start_job(stack, server.url(site.start))
    subscriber.subscribe(job_id, after=0)
    assert stack.stores.jobs.get(job_id).status is JobStatus.QUEUED
    assert stack.api("POST", f"/jobs/{job_id}/cancel")["statusCode"] in (200, 202)
    assert [e["type"] for e in subscriber.pump()] == ["job.cancelled"]
    gate.set()
    stack.wait(job_id)
    assert stack.stores.jobs.get(job_id).status is JobStatus.CANCELLED
