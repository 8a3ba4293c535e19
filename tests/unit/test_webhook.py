"""Signed webhooks: the signature a receiver checks, retries with backoff, the SSRF
guard, and the notify step recording the outcome on the job (moto + a 127.0.0.1
receiver)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from mdcrawl.adapters.aws.secrets import SecretValue
from mdcrawl.adapters.aws.stores import aws_stores
from mdcrawl.models import CrawlOptions, Event, EventType, Job, JobStatus
from mdcrawl.netguard import AddressGuard
from mdcrawl.pipeline.notify import NotifyDeps, notify
from mdcrawl.webhook import SIGNATURE_HEADER, Sender, event_body, sign, verify

from tests.support.aws import moto_clients
from tests.support.receiver import Receiver, running_receiver

SECRET = b"per-deployment-secret"
EVENT = Event(EventType.JOB_COMPLETED, "j1", 42, 1000.0, {"pages": 3})


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as box:
        yield box


class Sleeps:
    def __init__(self) -> None:
        self.taken: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.taken.append(seconds)


def sender(sleeps: Sleeps, allow: tuple[str, ...] = ("127.0.0.0/8",)) -> Sender:
    return Sender(AddressGuard(allow), now=lambda: 1000.0, sleep=sleeps)


def test_the_signature_holds_for_this_body_within_the_tolerance_only() -> None:
    body = event_body(EVENT)
    header = sign(SECRET, 1000, body)
    assert verify(SECRET, header, body, now=1100.0)
    assert not verify(SECRET, header, body + b" ", now=1100.0)  # tampered
    assert not verify(b"other", header, body, now=1100.0)  # another deployment
    assert not verify(SECRET, header, body, now=1000.0 + 301)  # replayed later
    assert not verify(SECRET, "t=x,v1=y", body, now=1000.0)


def test_a_failing_receiver_is_retried_with_backoff_then_signed_delivery(
    receiver: Receiver,
) -> None:
    receiver.statuses = [503, 500, 200]
    sleeps = Sleeps()
    delivery = asyncio.run(sender(sleeps).deliver(receiver.url, EVENT, SECRET))
    assert (delivery.ok, delivery.attempts, delivery.status) == (True, 3, 200)
    assert sleeps.taken == [1.0, 2.0]
    headers, body = receiver.got[-1]
    assert json.loads(body) == EVENT.to_dict()
    assert verify(SECRET, headers[SIGNATURE_HEADER], body, now=1000.0)
    assert headers["X-Mdcrawl-Event"] == "job.completed"
    assert {h["X-Mdcrawl-Delivery"] for h, _ in receiver.got} == {"j1-42"}  # same id


@pytest.mark.parametrize(("statuses", "attempts"), [([500], 4), ([404], 1), ([302], 1)])
def test_an_undelivered_webhook_is_an_answer_not_an_error(
    receiver: Receiver, statuses: list[int], attempts: int
) -> None:
    receiver.statuses = statuses
    delivery = asyncio.run(sender(Sleeps()).deliver(receiver.url, EVENT, SECRET))
    assert (delivery.ok, delivery.attempts) == (False, attempts)
    assert delivery.error == f"HTTP {statuses[0]}"


def test_the_ssrf_guard_keeps_a_webhook_off_internal_addresses(receiver: Receiver) -> None:
    delivery = asyncio.run(sender(Sleeps(), allow=()).deliver(receiver.url, EVENT, SECRET))
    assert not delivery.ok and delivery.attempts == 0 and "unsafe_url" in delivery.error
    assert receiver.got == []


@pytest.fixture
def aws():
    with moto_clients() as aws:
        yield aws


def notify_deps(aws, sleeps: Sleeps) -> NotifyDeps:
    secrets = aws.session.client("secretsmanager")
    arn = secrets.create_secret(Name="hook", SecretString=SECRET.decode())["ARN"]
    stores = aws_stores(aws.session, aws.names, aws.bucket)
    return NotifyDeps(stores.jobs, sender(sleeps), SecretValue(secrets, arn), stores.clock)


def test_notify_sends_once_and_records_the_outcome_on_the_job(aws, receiver) -> None:
    deps = notify_deps(aws, Sleeps())
    job = Job("j1", "http://docs.test/", CrawlOptions(), status=JobStatus.COMPLETED,
              webhook=receiver.url)
    deps.jobs.create(job)
    for _ in range(2):  # EventBridge delivers at least once
        notify("j1", EVENT.to_dict(), deps)
    assert len(receiver.got) == 1
    headers, body = receiver.got[0]
    assert verify(SECRET, headers[SIGNATURE_HEADER], body, now=1000.0)
    record = deps.jobs.get("j1").webhook_delivery
    assert record["ok"] and record["event"] == "job.completed" and record["status"] == 200


def test_a_failed_webhook_is_recorded_and_the_job_stays_as_it_ended(aws, receiver) -> None:
    receiver.statuses = [500]
    deps = notify_deps(aws, Sleeps())
    deps.jobs.create(Job("j1", "http://docs.test/", CrawlOptions(),
                         status=JobStatus.COMPLETED, webhook=receiver.url))
    delivery = notify("j1", EVENT.to_dict(), deps)
    assert delivery is not None and not delivery.ok
    job = deps.jobs.get("j1")
    assert job.status is JobStatus.COMPLETED
    assert job.webhook_delivery["ok"] is False and job.webhook_delivery["attempts"] == 4
    assert job.webhook_delivery["error"] == "HTTP 500"


def test_a_job_without_a_webhook_or_another_event_sends_nothing(aws, receiver) -> None:
    deps = notify_deps(aws, Sleeps())
    deps.jobs.create(Job("j1", "http://docs.test/", CrawlOptions()))
    deps.jobs.create(Job("j2", "http://docs.test/", CrawlOptions(), webhook=receiver.url))
    assert notify("j1", EVENT.to_dict(), deps) is None
    progress = Event(EventType.JOB_PROGRESS, "j2", 3, 1.0, {}).to_dict()
    assert notify("j2", progress, deps) is None
    assert receiver.got == []
