"""The synthesized definition runs under moto's Step Functions interpreter (the way the
e2e test runs it), with scripted stand-ins for the orchestrator and finalizer handlers."""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.awslambda_simple.models import LambdaSimpleBackend

from infra.asl import definition_json

from .conftest import Synth

Handler = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Handler]]:
    for key, value in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }.items():
        monkeypatch.setenv(key, value)
    handlers: dict[str, Handler] = {}

    def invoke(
        self: Any,
        function_name: str,
        qualifier: Any,
        body: Any,
        headers: Any,
        response_headers: dict[str, str],
    ) -> bytes:
        handler = handlers[
            function_name.split(":")[6] if function_name.startswith("arn:") else function_name
        ]
        try:
            return json.dumps(handler(json.loads(body or "{}"))).encode()
        except Exception as e:  # noqa: BLE001 - becomes a Lambda function error
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": type(e).__name__, "errorMessage": str(e)}).encode()

    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
    with mock_aws(
        config={"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
    ):
        yield handlers


def run(synth: Synth, job_id: str) -> str:
    iam = boto3.client("iam")
    role = iam.create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("handler.py", "def lambda_handler(e, c): return e\n")
    arns = {
        name: boto3.client("lambda").create_function(
            FunctionName=name,
            Runtime="python3.13",
            Role=role,
            Handler="handler.lambda_handler",
            Code={"ZipFile": buf.getvalue()},
        )["FunctionArn"]
        for name in ("orchestrator", "finalizer")
    }
    sfn = boto3.client("stepfunctions")
    definition = definition_json(synth.template, arns, wait_seconds=0, retry_interval_seconds=1)
    machine = sfn.create_state_machine(name="jobs", definition=definition, roleArn=role)
    execution = sfn.start_execution(
        stateMachineArn=machine["stateMachineArn"], input=json.dumps({"job_id": job_id})
    )["executionArn"]
    deadline = time.monotonic() + 30
    while (status := sfn.describe_execution(executionArn=execution)["status"]) == "RUNNING":
        assert time.monotonic() < deadline, "execution did not finish"
        time.sleep(0.05)
    return status


def test_orchestrate_loops_then_finalize_waits_then_succeeds(
    synth: Synth, aws: dict[str, Handler]
) -> None:
    answers = {"orchestrate": ["continue", "continue", "finalize"], "finalize": ["wait", "done"]}
    calls: list[tuple[str, dict[str, Any]]] = []

    def stand_in(function: str) -> Handler:
        def handler(event: dict[str, Any]) -> dict[str, Any]:
            calls.append((function, event))
            return {"job_id": event["job_id"], "next": answers[event["step"]].pop(0)}

        return handler

    aws["orchestrator"], aws["finalizer"] = stand_in("orchestrator"), stand_in("finalizer")
    status = run(synth, "j1")
    assert status == "SUCCEEDED"
    assert [(f, c["step"]) for f, c in calls] == [("orchestrator", "orchestrate")] * 3 + [
        ("finalizer", "finalize")
    ] * 2
    assert all(c["job_id"] == "j1" for _, c in calls)


def test_a_failing_step_marks_the_job_failed(synth: Synth, aws: dict[str, Handler]) -> None:
    calls: list[dict[str, Any]] = []

    def orchestrator(event: dict[str, Any]) -> dict[str, Any]:
        calls.append(event)
        if event["step"] == "orchestrate":
            raise RuntimeError("boom")
        return {}

    aws["orchestrator"] = orchestrator
    status = run(synth, "j2")
    assert status == "FAILED"
    assert [c["step"] for c in calls] == ["orchestrate", "fail"]
    assert calls[1]["job_id"] == "j2"
    assert calls[1]["error"]["Error"] == "RuntimeError"
