"""End to end, offline: POST /jobs through the api handler starts the state machine CDK
synthesizes, moto's interpreter runs it, its tasks call the real handlers, the crawler
fetches a real docs site on 127.0.0.1, a WebSocket subscriber follows along, and the
result downloaded through the pre-signed URL equals what the local CLI writes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from mdcrawl.models import JobStatus

from tests.e2e.conftest import Subscriber
from tests.support.iam import check_calls, role_statements, with_prefix_condition
from tests.support.presigned import fetch_presigned
from tests.support.server import RunningServer
from tests.support.sfn import OfflineStack, synthesized_template
from tests.support.sites import Site

pytestmark = pytest.mark.slow


def listen_for_job_events(stack: OfflineStack) -> Any:
    """A rule on the default bus sending mdcrawl's events to a queue; returns a reader."""
    sqs, bus = stack.aws.session.client("sqs"), stack.aws.session.client("events")
    queue = sqs.create_queue(QueueName="job-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])[
        "Attributes"]["QueueArn"]
    bus.put_rule(Name="jobs", EventPattern=json.dumps({"source": ["mdcrawl"]}))
    bus.put_targets(Rule="jobs", Targets=[{"Id": "q", "Arn": arn}])

    def read() -> list[dict[str, Any]]:
        messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)
        return [json.loads(m["Body"]) for m in messages.get("Messages", [])]

    return read


def start_job(stack: OfflineStack, url: str, **options: Any) -> str:
    answer = stack.api("POST", "/jobs", {"url": url, **options})
    assert answer["statusCode"] == 202, answer
    return str(json.loads(answer["body"])["job_id"])


def run_cli(url: str, out: Path, cache: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mdcrawl.cli", "crawl", url, "--out", str(out),
         "--cache-dir", str(cache)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def manifest_pages(text: str) -> list[tuple[Any, ...]]:
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [(d.get("url"), d.get("status"), d.get("file"), d.get("title")) for d in lines]


def result(stack: OfflineStack, job_id: str, fmt: str) -> bytes:
    answer = stack.api("GET", f"/jobs/{job_id}/result", query={"format": fmt})
    assert answer["statusCode"] == 302, answer
    return fetch_presigned(answer["headers"]["Location"])


def test_a_job_runs_end_to_end_like_the_cli(
    stack: OfflineStack, server: RunningServer, site: Site, tmp_path: Path
) -> None:
    url = server.url(site.start)
    announced = listen_for_job_events(stack)
    subscriber = Subscriber(stack, "conn-live")
    assert subscriber.connect() == 200
    job_id = start_job(stack, url)
    subscriber.subscribe(job_id, after=0)

    execution = stack.wait(job_id)
    assert execution["status"] == "SUCCEEDED", stack.history(job_id)[-5:]
    assert json.loads(execution["output"])["finalize"]["next"] == "done"

    # Progress: ordered, gap-free, exactly the log, ending in job.completed.
    events = subscriber.pump()
    log = [e.to_dict() for e in stack.stores.events.after(job_id, 0, 100_000)]
    assert [e["seq"] for e in events] == list(range(1, len(log) + 1))
    assert events == log
    assert events[-1]["type"] == "job.completed"
    assert [e["type"] for e in events].count("job.completed") == 1
    pages_done = [e for e in events if e["type"] == "page.done"]

    job = stack.stores.jobs.get(job_id)
    assert job.status is JobStatus.COMPLETED and not job.truncated
    assert job.counters.processed == job.counters.crawled == len(pages_done)
    assert events[-1]["data"]["pages"] == len(pages_done) > 20

    # The terminal event, on the EventBridge bus too.
    (detail,) = announced()
    assert detail["detail-type"] == "Job Completed" and detail["source"] == "mdcrawl"
    assert detail["detail"] == events[-1]

    view = json.loads(stack.api("GET", f"/jobs/{job_id}")["body"])
    assert view["status"] == "completed"

    docs = result(stack, job_id, "markdown").decode()
    manifest = result(stack, job_id, "manifest").decode()
    llms = result(stack, job_id, "llms").decode()

    out = tmp_path / "cli"
    run_cli(url, out, tmp_path / "cache")
    assert manifest_pages(manifest) == manifest_pages((out / "manifest.jsonl").read_text())
    assert docs == (out / "docs.md").read_text()
    assert llms == (out / "llms.txt").read_text()
    # The pages result: the linked page files, packed into one zip at finalize.
    with zipfile.ZipFile(io.BytesIO(result(stack, job_id, "pages"))) as packed:
        files = {name: packed.read(name).decode() for name in packed.namelist()}
    local = {f"pages/{p.name}": p.read_text() for p in (out / "pages").iterdir()}
    assert files == local and len(files) == len(pages_done)


def test_roles_allow_every_call_and_missing_keys_are_404(
    stack: OfflineStack, server: RunningServer, site: Site
) -> None:
    """Every AWS call of a whole job (recorded per function) is allowed by that
    function's synthesized role; with the ListBucket grant conditioned on ``s3:prefix``
    (as before issue 10) the existence checks would get 403 on AWS and the check fails."""
    job_id = start_job(stack, server.url(site.start), max_pages=15)
    assert stack.wait(job_id)["status"] == "SUCCEEDED"
    assert stack.api("GET", f"/jobs/{job_id}/result", query={"format": "pages"})[
        "statusCode"] == 302
    calls = stack.recorder.calls
    functions = {c.function for c in calls}
    assert {"api", "orchestrator", "crawler", "processor"} <= functions
    roles = role_statements(synthesized_template())
    assert check_calls(calls, roles) == []

    old = check_calls(calls, with_prefix_condition(roles))
    assert old and all("may miss" in line for line in old)
    # The crawler no longer reads a key that may be missing: a body's existence is its
    # pack's locator in DynamoDB (adapters/aws/packs.py), not a HEAD.
    assert {line.split(":")[0] for line in old} >= {"processor", "api"}
