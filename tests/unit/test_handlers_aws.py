"""The five handlers and the AWS composition root, one call at a time over moto:
event shapes in, the right port calls, the right answers out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mdcrawl.models import JobStatus
from mdcrawl.names import EnvVar, cap_env
from mdcrawl.runtime.aws import AwsSettings, describe_error, slice_end

from tests.support.sfn import FakeContext, OfflineStack, offline_stack

EVENTS = Path(__file__).resolve().parents[1] / "fixtures" / "events"


def load_event(name: str) -> dict[str, Any]:
    return json.loads((EVENTS / f"{name}.json").read_text())


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Any:
    with offline_stack(monkeypatch) as running:
        yield running


def test_settings_come_from_the_env_names() -> None:
    env = {var.value: f"t-{var.name.lower()}" for var in EnvVar if var.name.endswith("_TABLE")}
    env.update({EnvVar.BUCKET.value: "b", EnvVar.ALLOW_NETWORKS.value: "127.0.0.0/8, ::1/128",
                cap_env("max_pages"): "50", cap_env("budget_s"): "120"})
    settings = AwsSettings.from_env(env)
    assert settings.allow_networks == ("127.0.0.0/8", "::1/128")
    assert settings.limits.options.caps["max_pages"] == 50
    assert settings.limits.options.caps["budget_s"] == 120.0
    assert settings.limits.options.caps["concurrency"] == 16  # the hosted default
    with pytest.raises(RuntimeError, match="not configured"):
        settings.require("crawler_function")
    with pytest.raises(RuntimeError, match=EnvVar.BUCKET.value):
        AwsSettings.from_env({k: v for k, v in env.items() if k != EnvVar.BUCKET.value})


def test_a_slice_ends_before_the_lambda_timeout_and_never_past_the_deadline() -> None:
    assert slice_end(1000.0, 120_000, None) == 1050.0  # 120 s - 70 s margin
    assert slice_end(1000.0, 120_000, 1010.0) == 1010.0
    assert slice_end(1000.0, 30_000, None) == 1000.0


def test_catch_payloads_become_sentences() -> None:
    cause = json.dumps({"errorType": "StoreError", "errorMessage": "table gone"})
    assert describe_error({"Error": "StoreError", "Cause": cause}) == "StoreError: table gone"
    assert describe_error(None) == "the job's workflow failed"


def test_api_post_creates_and_starts_one_execution(stack: OfflineStack) -> None:
    event = load_event("rest_post_jobs")
    event["requestContext"]["identity"]["apiKeyId"] = stack.owner
    event["body"] = json.dumps({"url": "http://127.0.0.1:9/docs/", "max_pages": 5})
    stack.faults.rules["orchestrator"] = lambda n, e: {"job_id": e["job_id"], "next": "done"}
    answer = stack.invoke("api", event)
    assert answer["statusCode"] == 202, answer
    job_id = json.loads(answer["body"])["job_id"]
    again = stack.invoke("api", event)  # same Idempotency-Key: same job, no second run
    assert json.loads(again["body"])["job_id"] == job_id
    runs = stack.sfn.list_executions(stateMachineArn=stack.machine_arn)["executions"]
    assert [r["name"] for r in runs] == [job_id]
    assert stack.stores.jobs.get(job_id).owner == stack.owner


def test_api_refuses_private_addresses_and_strangers(stack: OfflineStack) -> None:
    private = load_event("rest_post_jobs_private_url")
    private["requestContext"]["identity"]["apiKeyId"] = stack.owner
    assert stack.invoke("api", private)["statusCode"] == 400
    anonymous = load_event("rest_post_jobs_no_api_key")
    assert stack.invoke("api", anonymous)["statusCode"] == 401
    bad_b64 = {**load_event("rest_post_jobs_base64"), "body": "%%%not-base64"}
    bad_b64["requestContext"]["identity"]["apiKeyId"] = stack.owner
    assert stack.invoke("api", bad_b64)["statusCode"] == 400
    assert stack.sfn.list_executions(stateMachineArn=stack.machine_arn)["executions"] == []


def test_websocket_connect_checks_the_key(stack: OfflineStack) -> None:
    event = load_event("ws_connect")
    del event["requestContext"]["authorizer"]
    event["requestContext"]["connectionId"] = "c-1"
    event["queryStringParameters"] = {"api_key": stack.api_key}
    assert stack.invoke("websocket", event)["statusCode"] == 200
    assert stack.stores.connections.owner("c-1") == stack.owner
    event["requestContext"]["connectionId"] = "c-2"
    event["queryStringParameters"] = {"api_key": "wrong"}
    assert stack.invoke("websocket", event)["statusCode"] == 403
    assert stack.stores.connections.owner("c-2") is None
    gone = load_event("ws_disconnect")
    gone["requestContext"]["connectionId"] = "c-1"
    assert stack.invoke("websocket", gone)["statusCode"] == 200
    assert stack.stores.connections.owner("c-1") is None


def test_orchestrator_fail_step_marks_the_job_failed_once(stack: OfflineStack) -> None:
    created = stack.api("POST", "/jobs", {"url": "http://127.0.0.1:9/"})
    stack.wait(json.loads(created["body"])["job_id"])  # the real run fails: nothing listens
    job_id = json.loads(created["body"])["job_id"]
    job = stack.stores.jobs.get(job_id)
    assert job.status is JobStatus.FAILED
    event = {"step": "fail", "job_id": job_id, "error": {"Error": "X", "Cause": "y"}}
    answer = stack.modules["orchestrator"].lambda_handler(event, FakeContext("orchestrator"))
    assert answer == {"job_id": job_id, "next": "done"}
    failed = [e for e in stack.stores.events.after(job_id) if e.type == "job.failed"]
    assert len(failed) == 1


def test_orchestrator_refuses_an_unknown_step(stack: OfflineStack) -> None:
    with pytest.raises(ValueError, match="unknown step"):
        stack.modules["orchestrator"].lambda_handler(
            {"step": "dance", "job_id": "j1"}, FakeContext("orchestrator")
        )


def test_handlers_publish_their_metrics(
    stack: OfflineStack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    event = load_event("ws_connect")
    event["requestContext"]["connectionId"] = "c-metrics"
    stack.invoke("websocket", event)
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "_aws" in line]
    # Powertools writes one value as a number and several (shared metric state across the
    # handlers of this one process) as a list: accept either, but the connect must count.
    counts = [doc["Connects"] for doc in emitted if "Connects" in doc]
    assert counts, f"no Connects metric among {emitted}"
    assert all(c == 1.0 or (isinstance(c, list) and set(c) == {1.0}) for c in counts)
