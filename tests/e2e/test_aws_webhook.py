"""A job's webhook, end to end offline: POST /jobs names it (SSRF-checked), the job
runs, and the synthesized EventBridge rule hands ``Job Completed`` to the orchestrator's
notify step, which POSTs the event signed with the deployment's secret (Secrets Manager
under moto) to a receiver on 127.0.0.1."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from mdcrawl.webhook import SIGNATURE_HEADER, verify

from tests.support.receiver import Receiver, running_receiver
from tests.support.server import RunningServer
from tests.support.sfn import WEBHOOK_SECRET, OfflineStack, rule_input, synthesized_template
from tests.support.sites import Site


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as box:
        yield box


def ended(stack: OfflineStack, job_id: str) -> dict:
    (last,) = [e for e in stack.stores.events.after(job_id, 0, 100_000)][-1:]
    return {"source": "mdcrawl", "detail-type": "Job Completed", "detail": last.to_dict()}


def test_a_completed_job_posts_its_signed_event_to_its_webhook(
    stack: OfflineStack, server: RunningServer, site: Site, receiver: Receiver
) -> None:
    answer = stack.api("POST", "/jobs", {"url": server.url(site.start), "max_pages": 5,
                                         "webhook": receiver.url})
    assert answer["statusCode"] == 202, answer
    job_id = json.loads(answer["body"])["job_id"]
    assert stack.wait(job_id)["status"] == "SUCCEEDED"
    event = rule_input(synthesized_template(), "WebhooksJobsEnded", ended(stack, job_id))
    assert event["step"] == "notify" and event["job_id"] == job_id
    for _ in range(2):  # EventBridge delivers at least once: sent once
        stack.invoke("orchestrator", event)
    ((headers, body),) = receiver.got
    assert json.loads(body)["type"] == "job.completed" and json.loads(body)["job_id"] == job_id
    assert verify(WEBHOOK_SECRET.encode(), headers[SIGNATURE_HEADER], body, now=time.time())
    view = json.loads(stack.api("GET", f"/jobs/{job_id}")["body"])
    assert view["status"] == "completed" and view["webhook_delivery"]["ok"] is True


def test_a_webhook_to_an_internal_address_is_refused_at_creation(
    stack: OfflineStack, server: RunningServer, site: Site
) -> None:
    answer = stack.api("POST", "/jobs", {"url": server.url(site.start),
                                         "webhook": "http://169.254.169.254/latest/"})
    assert answer["statusCode"] == 400, answer
    answer = stack.api("POST", "/jobs", {"url": server.url(site.start),
                                         "webhook": "file:///etc/passwd"})
    assert answer["statusCode"] == 400, answer
