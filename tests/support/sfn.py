"""The stack, offline: moto for every service, the real handlers behind moto's Lambda,
and the state machine CDK synthesizes run by moto's Step Functions interpreter.

    with offline_stack(monkeypatch, tmp_path_factory) as stack:
        answer = stack.api("POST", "/jobs", {"url": ...})
        stack.wait(job_id)                           # the execution's final status

- ``synthesized_asl()`` runs ``python app.py`` once per session (bundling skipped) and
  resolves the definition with ``infra.asl`` (Wait/Retry intervals shortened: moto's
  interpreter sleeps for real).
- Every handler runs in-process through ``LambdaHandlers`` with a stand-in Lambda
  context; ``Faults`` lets a test make one function fail on chosen calls.
- Each handler module gets its own ``AwsRuntime`` over the moto session and one env
  mapping (what infra/pipeline.py sets), so nothing reads the real environment.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from mdcrawl.names import TABLE_ENV, EnvVar, Table, cap_env
from mdcrawl.runtime.aws import AwsRuntime

from infra.asl import definition_json, load_template
from tests.support.aws import (
    LambdaHandlers,
    MotoAws,
    WsRecorder,
    create_function,
    moto_clients,
    served_moto,
)
from tests.support.handlers import load_handler
from tests.support.iam import CallRecorder, Names, running_as
from tests.support.stream import StreamPump

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = (
    "api", "websocket", "orchestrator", "finalizer", "crawler", "processor", "fanout"
)
WS_API_ID, STAGE = "wsapi12345", "prod"
WEBHOOK_SECRET = "offline-webhook-signing-secret"
WS_ENDPOINT = f"https://{WS_API_ID}.execute-api.us-east-1.amazonaws.com/{STAGE}"
POWERTOOLS_ENV = {
    "POWERTOOLS_SERVICE_NAME": "mdcrawl-test",
    "POWERTOOLS_METRICS_NAMESPACE": "mdcrawl",
    # Five "processes" share one interpreter here, and Powertools metrics share state
    # across instances: a flush in one thread would clear another's. One per process on
    # Lambda; the unit handler tests run them enabled.
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
}


@functools.cache
def synthesized_template() -> dict[str, Any]:
    """``python app.py`` into a temporary cdk.out (once per test process)."""
    outdir = Path(tempfile.mkdtemp(prefix="mdcrawl-cdk-"))
    env = {
        **os.environ,
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "CDK_OUTDIR": str(outdir),
        "CDK_CONTEXT_JSON": json.dumps({"aws:cdk:bundling-stacks": []}),
    }
    done = subprocess.run(
        [sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"python app.py failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return load_template(outdir / "Mdcrawl.template.json")


@dataclass
class FakeContext:
    """What Powertools and the orchestrator read from a Lambda context."""

    function_name: str
    remaining_ms: int = 120_000
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


class Faults:
    """Per function, a callable run before the handler: it may raise (a function error)
    or return a replacement answer. It sees the call number (1-based) and the event."""

    def __init__(self) -> None:
        self.rules: dict[str, Callable[[int, dict[str, Any]], Any]] = {}
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def check(self, name: str, event: dict[str, Any]) -> Any:
        with self._lock:
            self.calls[name] = self.calls.get(name, 0) + 1
            number = self.calls[name]
        rule = self.rules.get(name)
        return rule(number, event) if rule else None


def error_named(name: str, message: str = "") -> Exception:
    """An exception whose class name is ``name`` (Lambda reports it as the errorType)."""
    return type(name, (Exception,), {})(message or name)


def function_env(aws: MotoAws, arns: dict[str, str], machine_arn: str) -> dict[str, str]:
    env = {var.value: aws.names[table] for table, var in TABLE_ENV.items()}
    env.update({
        EnvVar.BUCKET.value: aws.bucket,
        EnvVar.CRAWLER_FUNCTION.value: "crawler",
        EnvVar.PROCESSOR_FUNCTION.value: "processor",
        EnvVar.STATE_MACHINE_ARN.value: machine_arn,
        # moto's server takes the management API at its root, without the stage.
        EnvVar.WEBSOCKET_ENDPOINT.value: aws.endpoint or WS_ENDPOINT,
        EnvVar.ALLOW_NETWORKS.value: "127.0.0.0/8",
        cap_env("budget_s"): "300",
        cap_env("max_pages"): "2000",
        cap_env("concurrency"): "8",
        EnvVar.EVENT_BUS.value: "default",
    })
    return env


@dataclass
class OfflineStack:
    aws: MotoAws
    modules: dict[str, ModuleType]
    runtimes: dict[str, AwsRuntime]
    machine_arn: str
    ws: WsRecorder
    faults: Faults
    remaining_ms: dict[str, int]
    recorder: CallRecorder
    stream: StreamPump | None = None  # the events table's stream -> the fanout function
    owner: str = "key-owner-1"
    api_key: str = "test-api-key-value-0123456789"

    @property
    def sfn(self) -> Any:
        return self.aws.session.client("stepfunctions")

    @property
    def stores(self) -> Any:
        return self.runtimes["api"].stores

    def invoke(self, name: str, event: dict[str, Any]) -> Any:
        """Call a function's real ``lambda_handler`` the way Lambda would."""
        # The AWS calls made from here on are this function's (tests/support/iam), a
        # fault rule's included (it stands in for the function).
        with running_as(name):
            replaced = self.faults.check(name, event)
            if replaced is not None:
                return replaced
            context = FakeContext(name, self.remaining_ms.get(name, 120_000))
            return self.modules[name].lambda_handler(event, context)

    def api(
        self, method: str, path: str, body: Any = None, *, owner: str | None = None,
        query: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        event = {
            "httpMethod": method,
            "path": path,
            "headers": {"Content-Type": "application/json"},
            "queryStringParameters": query,
            "body": None if body is None else json.dumps(body),
            "isBase64Encoded": False,
            "requestContext": {
                "stage": STAGE,
                "identity": {"apiKeyId": self.owner if owner is None else owner},
            },
        }
        answer: dict[str, Any] = self.invoke("api", event)
        return answer

    def ws_event(self, route: str, connection_id: str, **extra: Any) -> dict[str, Any]:
        event = {"requestContext": {"routeKey": route, "connectionId": connection_id,
                                    "stage": STAGE, "apiId": WS_API_ID}, **extra}
        answer: dict[str, Any] = self.invoke("websocket", event)
        return answer

    def execution_arn(self, job_id: str) -> str:
        return self.machine_arn.replace(":stateMachine:", ":execution:") + f":{job_id}"

    def wait(self, job_id: str, timeout_s: float = 240.0) -> dict[str, Any]:
        """The execution's description once it left RUNNING."""
        give_up = time.monotonic() + timeout_s
        while True:
            described = self.sfn.describe_execution(executionArn=self.execution_arn(job_id))
            if described["status"] != "RUNNING" or time.monotonic() > give_up:
                return dict(described)
            time.sleep(0.05)

    def history(self, job_id: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = self.sfn.get_execution_history(
            executionArn=self.execution_arn(job_id), maxResults=1000
        )["events"]
        return events


@contextlib.contextmanager
def offline_stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[OfflineStack]:
    """The stack with moto in this process (``mock_aws``): every handler runs in-thread."""
    with moto_clients(_moto_config(monkeypatch)) as aws, _stack(monkeypatch, aws) as stack:
        yield stack


@contextlib.contextmanager
def served_stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[OfflineStack]:
    """The same stack with moto as a server on 127.0.0.1 (``served_moto``): processes
    other than this one reach it too (the scale harness's worker processes, one per
    execution environment), and ``stack.invoke`` may be replaced to run there."""
    with served_moto(_moto_config(monkeypatch)) as aws, _stack(monkeypatch, aws) as stack:
        yield stack


def _moto_config(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    for key, value in POWERTOOLS_ENV.items():
        monkeypatch.setenv(key, value)
    return {"lambda": {"use_docker": False}, "stepfunctions": {"execute_state_machine": True}}


@contextlib.contextmanager
def _stack(monkeypatch: pytest.MonkeyPatch, aws: MotoAws) -> Iterator[OfflineStack]:
    template = synthesized_template()
    handlers = LambdaHandlers().install(monkeypatch)
    ws = WsRecorder().install(monkeypatch)
    arns = {name: create_function(aws.session, name) for name in FUNCTIONS}
    asl = definition_json(template, arns, wait_seconds=1, retry_interval_seconds=1)
    role = aws.session.client("iam").create_role(
        RoleName="sfn-role", AssumeRolePolicyDocument="{}"
    )["Role"]["Arn"]
    machine_arn = aws.session.client("stepfunctions").create_state_machine(
        name="jobs", definition=asl, roleArn=role
    )["stateMachineArn"]
    env = function_env(aws, arns, machine_arn)
    recorder = CallRecorder(
        Names({name: table for table, name in aws.names.items()}, aws.bucket)
    ).install(aws.session.events)
    apigw = aws.session.client("apigateway")
    plan = apigw.create_usage_plan(name="plan")["id"]
    env[EnvVar.USAGE_PLAN_ID.value] = plan
    env[EnvVar.WEBHOOK_SECRET.value] = aws.session.client("secretsmanager").create_secret(
        Name="webhook-signing", SecretString=WEBHOOK_SECRET
    )["ARN"]
    # A fresh module per stack: its own globals, as a new execution environment has.
    modules = {name: load_handler(name, f"mdcrawl_fn_{name}_{uuid.uuid4().hex}") for name in FUNCTIONS}
    runtimes = {name: AwsRuntime(environ=env, session=aws.session) for name in FUNCTIONS}
    for name, module in modules.items():
        monkeypatch.setattr(module, "RUNTIME", runtimes[name])
    stack = OfflineStack(aws, modules, runtimes, machine_arn, ws, Faults(), {}, recorder)
    key = apigw.create_api_key(name="tester", enabled=True, value=stack.api_key)
    apigw.create_usage_plan_key(usagePlanId=plan, keyId=key["id"], keyType="API_KEY")
    stack.owner = key["id"]
    for name in FUNCTIONS:
        handlers.handlers[name] = functools.partial(_dispatch, stack, name)
    stack.stream = StreamPump(
        aws.session, aws.names[Table.EVENTS], lambda event: stack.invoke("fanout", event),
        endpoint=aws.endpoint,
    ).start()
    try:
        yield stack
    finally:
        stack.stream.stop()


def _dispatch(stack: OfflineStack, name: str, event: dict[str, Any], _context: Any) -> Any:
    return stack.invoke(name, event)


def rule_input(template: dict[str, Any], rule_label: str, event: dict[str, Any]) -> dict[str, Any]:
    """What EventBridge hands the target of the synthesized rule ``rule_label`` for
    ``event``: its InputTransformer applied (each ``<name>`` becomes the JSON value at
    its path), as EventBridge does."""
    (rule,) = [
        r for k, r in template["Resources"].items()
        if r["Type"] == "AWS::Events::Rule" and k.startswith(rule_label)
    ]
    transformer = rule["Properties"]["Targets"][0]["InputTransformer"]
    text = transformer["InputTemplate"]
    for name, path in transformer["InputPathsMap"].items():
        value: Any = event
        for part in path.removeprefix("$.").split("."):
            value = value[part]
        text = text.replace(f"<{name}>", json.dumps(value))
    return dict(json.loads(text))
