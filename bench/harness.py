"""The scale harness: the offline stack (tests/support/sfn.py: the synthesized state
machine under moto, the real handlers) made to behave like AWS where it matters for
scale and cost.

- **Async invokes are asynchronous**: an ``Event`` invoke is queued on a pool of
  ``async_workers`` threads and answered 202 at once (moto runs it inline).
- **Latency per AWS call**: every call a function makes waits ``latency_ms`` first
  (same-region round trips are 5-20 ms; moto answers in well under one).
- **Limits enforced**: Lambda payloads (6 MB sync request and response, 256 KB async),
  DynamoDB items (400 KB), WebSocket messages (128 KB) are checked on every call and
  counted as violations (the run goes on, the report shows them).
- **Billing units as AWS counts them**: DynamoDB capacity from item sizes (1 KB per
  write unit, plus one per keys-only index entry a write adds, moves or removes; 4 KB
  per read unit, halved for eventually consistent reads), S3 requests by class, Lambda
  GB-s per invocation rounded up to the ms (I/O waits included, as Lambda bills them),
  Step Functions transitions, WebSocket messages (in 32 KB increments, as API
  Gateway meters them: a 96 KiB frame is three).
- **Per-host in-flight requests** as the crawled site sees them (every crawler
  invocation shares this process, so one counter sees them all).

- **Execution environments and cold starts**: each function has a pool of environments;
  an invocation with none idle starts one (a cold start, counted per function and billed
  its INIT time), and gives it back when it ends: as many environments as the function's
  peak concurrency, reused afterwards, as Lambda does.

Not modelled: separate worker processes per function (invocations are threads of one
interpreter, so CPU-heavy conversions contend for the GIL: the processor is billed its
own thread CPU time plus ``latency_ms`` per AWS call, what it would take with a vCPU of
its own; the others, waiting on I/O, their wall time, which the shared CPU inflates:
an over-estimate). The crawled site's own latency is whatever the server has.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
from mdcrawl.adapters.aws.limits import (
    DYNAMODB_ITEM,
    LAMBDA_ASYNC_PAYLOAD,
    LAMBDA_SYNC_PAYLOAD,
    WEBSOCKET_MESSAGE,
)
from mdcrawl.adapters.aws.schema import SCHEMAS
from moto.awslambda_simple.models import LambdaSimpleBackend

from tests.support.iam import CURRENT_FUNCTION
from tests.support.sfn import OfflineStack

# Calls the harness makes to watch the run: not part of the bill.
OBSERVER_CALLS = {("stepfunctions", "DescribeExecution"), ("stepfunctions", "GetExecutionHistory")}
DDB_READS = {"GetItem", "Query", "Scan", "BatchGetItem"}
# Functions billed by their own CPU time plus AWS waits rather than wall time (see
# Harness._timed_invoke): the processor converts HTML, single-threaded.
CPU_BOUND = {"processor"}
S3_PUT_CLASS = {
    "PutObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload",
    "CopyObject", "ListObjectsV2",
}


# API Gateway meters WebSocket messages in 32 KB increments: a 33 KB message is billed
# as two (aws.amazon.com/api-gateway/pricing). A 96 KiB frame is three messages.
WS_BILLING_INCREMENT = 32 * 1024


def ws_billed_messages(size: int) -> int:
    """Billed messages for one WebSocket message of ``size`` bytes."""
    return max(1, math.ceil(size / WS_BILLING_INCREMENT))


# --- DynamoDB item sizes, as DynamoDB computes them ---------------------------------
def attribute_size(value: dict[str, Any]) -> int:
    ((kind, v),) = value.items()
    if kind == "S":
        return len(v.encode())
    if kind == "N":
        return math.ceil(len(str(v).lstrip("-").replace(".", "")) / 2) + 1
    if kind == "B":
        return len(v)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(attribute_size({kind[0]: x}) for x in v)
    if kind == "L":
        return 3 + sum(1 + attribute_size(x) for x in v)
    if kind == "M":
        return 3 + sum(len(k.encode()) + 1 + attribute_size(x) for k, x in v.items())
    raise ValueError(kind)


def item_size(item: dict[str, Any]) -> int:
    return sum(len(name.encode()) + attribute_size(value) for name, value in item.items())


@dataclass
class Meter:
    """Everything one run is billed for, plus the limits it broke."""

    latency_s: float = 0.0
    calls: Counter[tuple[str, str]] = field(default_factory=Counter)
    read_units: float = 0.0
    write_units: float = 0.0
    write_units_by_table: Counter[str] = field(default_factory=Counter)
    invocations: Counter[str] = field(default_factory=Counter)
    billed_ms: Counter[str] = field(default_factory=Counter)
    violations: Counter[str] = field(default_factory=Counter)
    ws_posts: int = 0  # PostToConnection calls
    ws_messages: int = 0  # what API Gateway bills for them (32 KB increments)
    cold_starts: Counter[str] = field(default_factory=Counter)
    peak_inflight: Counter[str] = field(default_factory=Counter)
    _inflight: Counter[str] = field(default_factory=Counter)
    _table_of: dict[str, str] = field(default_factory=dict)
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- AWS calls ---------------------------------------------------------------
    def before_call(
        self, model: Any, params: dict[str, Any], context: dict[str, Any], **_: Any
    ) -> None:
        if CURRENT_FUNCTION.get() is None or context.get("is_presign_request"):
            return
        context["mdcrawl_params"] = params
        service, operation = model.service_model.service_name, model.name
        if (service, operation) in OBSERVER_CALLS:
            return
        self._local.__dict__["calls"] = self._local.__dict__.get("calls", 0) + 1
        with self._lock:
            self.calls[(service, operation)] += 1
            self._check_limits(service, operation, params)
        if self.latency_s:
            time.sleep(self.latency_s)

    def after_call(self, model: Any, parsed: Any, context: dict[str, Any], **_: Any) -> None:
        params = context.get("mdcrawl_params")
        if params is None or model.service_model.service_name != "dynamodb":
            return
        with self._lock:
            before = self.write_units
            self._capacity(model.name, params, parsed)
            table = self._table_of.get(params.get("TableName", ""), "batch")
            if self.write_units > before:
                self.write_units_by_table[str(table)] += self.write_units - before

    def _check_limits(self, service: str, operation: str, params: dict[str, Any]) -> None:
        if service == "dynamodb" and operation == "PutItem":
            if item_size(params["Item"]) > DYNAMODB_ITEM:
                self.violations["dynamodb item over 400 KB"] += 1
        elif service == "lambda" and operation == "Invoke":
            size = len(params.get("Payload") or b"")
            limit = LAMBDA_ASYNC_PAYLOAD if params.get("InvocationType") == "Event" else (
                LAMBDA_SYNC_PAYLOAD)
            if size > limit:
                self.violations[f"lambda {params.get('InvocationType')} payload"] += 1
        elif service == "apigatewaymanagementapi" and operation == "PostToConnection":
            self.ws_posts += 1
            self.ws_messages += ws_billed_messages(len(params["Data"]))
            if len(params["Data"]) > WEBSOCKET_MESSAGE:
                self.violations["websocket message over 128 KB"] += 1

    def _capacity(self, operation: str, params: dict[str, Any], parsed: dict[str, Any]) -> None:
        consistent = 1.0 if params.get("ConsistentRead") else 0.5
        if operation == "GetItem":
            size = item_size(parsed.get("Item", {}))
            self.read_units += max(1, math.ceil(size / 4096)) * consistent
        elif operation in ("Query", "Scan"):
            size = sum(item_size(i) for i in parsed.get("Items", []))
            self.read_units += max(1, math.ceil(size / 4096)) * consistent
        elif operation == "BatchGetItem":
            for items in parsed.get("Responses", {}).values():
                self.read_units += sum(
                    max(1, math.ceil(item_size(i) / 4096)) * 0.5 for i in items
                )
        elif operation == "PutItem":
            self.write_units += self._write_units(params["TableName"], params["Item"])
        elif operation == "UpdateItem":
            after = parsed.get("Attributes") or {}
            self.write_units += self._write_units(
                params["TableName"], after or params["Key"], _updated_names(params)
            )
        elif operation == "DeleteItem":
            self.write_units += 1
        elif operation == "BatchWriteItem":
            for table, requests in params["RequestItems"].items():
                for r in requests:
                    item = r.get("PutRequest", {}).get("Item") or r["DeleteRequest"]["Key"]
                    self.write_units += self._write_units(table, item)
        elif operation == "TransactWriteItems":
            for entry in params["TransactItems"]:
                ((kind, body),) = entry.items()
                item = body.get("Item") or body.get("Key", {})
                self.write_units += 2 * self._write_units(body["TableName"], item)

    def _write_units(
        self, table_name: str, item: dict[str, Any], touched: set[str] | None = None
    ) -> float:
        """Units for the item's size, plus one per keys-only index the write changes:
        a put writes every index whose key it holds; an update only the indexes whose
        key attributes it sets or removes (``touched``), as DynamoDB bills them."""
        units = max(1, math.ceil(item_size(item) / 1024))
        spec = SCHEMAS.get(self._table_of.get(table_name))  # type: ignore[arg-type]
        if spec is None:
            return float(units)
        if touched is None:
            changed = [i for i in spec.indexes if i.pk.name in item]
        else:
            changed = [i for i in spec.indexes if touched & {k.name for k in (i.pk, i.sk) if k}]
        return float(units + len(changed))  # a keys-only index entry is under 1 KB

    # -- invocations --------------------------------------------------------------
    def thread_calls(self) -> int:
        """AWS calls made so far by the current thread."""
        return int(self._local.__dict__.get("calls", 0))

    def billed_init(self, name: str, seconds: float) -> None:
        """A cold start's INIT: billed time, not an invocation."""
        with self._lock:
            self.billed_ms[name] += math.ceil(seconds * 1000)

    def billed(self, name: str, seconds: float) -> None:
        with self._lock:
            self.invocations[name] += 1
            self.billed_ms[name] += max(1, math.ceil(seconds * 1000))

    # -- the crawled site ----------------------------------------------------------
    def enter(self, host: str) -> None:
        with self._lock:
            self._inflight[host] += 1
            self.peak_inflight[host] = max(self.peak_inflight[host], self._inflight[host])

    def leave(self, host: str) -> None:
        with self._lock:
            self._inflight[host] -= 1


@dataclass
class Environments:
    """Lambda's execution environments, per function: an invocation takes an idle one
    (warm) or Lambda starts a new one (a cold start: counted, and billed ``init_ms``, as
    Lambda bills the INIT phase since August 2025). Environments outlive a run, as warm
    containers outlive a job."""

    init_ms: dict[str, float] = field(default_factory=dict)
    idle: Counter[str] = field(default_factory=Counter)
    started: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, name: str) -> bool:
        """True when this invocation starts a new environment (a cold start)."""
        with self._lock:
            if self.idle[name] > 0:
                self.idle[name] -= 1
                return False
            self.started[name] += 1
            return True

    def give_back(self, name: str) -> None:
        with self._lock:
            self.idle[name] += 1


# A handler's INIT: importing it (``runpy.run_path(functions/<name>/handler.py)`` in a
# fresh interpreter), measured on the shared 2-core machine under load (~11): an
# over-estimate of Lambda's. Few per run (one per environment), so it moves little.
INIT_MS = {"api": 2300.0, "websocket": 2300.0, "orchestrator": 1600.0, "crawler": 2900.0,
           "processor": 2600.0}


class Harness:
    """Installs the meter's hooks on an offline stack and makes Event invokes async."""

    def __init__(self, stack: OfflineStack, async_workers: int = 16) -> None:
        self.stack = stack
        self.meter = Meter()
        self.environments = Environments(dict(INIT_MS))
        self.pool = ThreadPoolExecutor(max_workers=async_workers, thread_name_prefix="lambda-event")
        self.pending: list[Any] = []
        events = stack.aws.session.events
        events.register("provide-client-params", self._before)
        events.register("after-call", self._after)
        self._timed_invoke()

    def reset(self, latency_ms: float) -> Meter:
        self.meter = Meter(latency_s=latency_ms / 1000.0)
        self.meter._table_of = {name: table for table, name in self.stack.aws.names.items()}
        return self.meter

    def _before(self, **kwargs: Any) -> None:
        self.meter.before_call(**kwargs)

    def _after(self, **kwargs: Any) -> None:
        self.meter.after_call(**kwargs)

    def _timed_invoke(self) -> None:
        stack, harness = self.stack, self
        original = stack.invoke

        def invoke(name: str, event: dict[str, Any]) -> Any:
            meter, environments = harness.meter, harness.environments
            cold = environments.take(name)
            if cold:
                meter.cold_starts[name] += 1
                meter.billed_init(name, environments.init_ms.get(name, 0.0) / 1000.0)
            start, cpu, calls = time.perf_counter(), time.thread_time(), meter.thread_calls()
            try:
                return original(name, event)
            finally:
                environments.give_back(name)
                if name in CPU_BOUND:
                    # Lambda gives it a vCPU of its own; here it shares two cores with
                    # every other invocation: its own CPU time plus its waits on AWS.
                    own = time.thread_time() - cpu
                    meter.billed(name, own + (meter.thread_calls() - calls) * meter.latency_s)
                else:
                    meter.billed(name, time.perf_counter() - start)

        stack.invoke = invoke  # type: ignore[method-assign]

    @contextlib.contextmanager
    def installed(self, monkeypatch: Any) -> Iterator[Harness]:
        patched = LambdaSimpleBackend.invoke  # LambdaHandlers' in-process dispatch
        harness = self

        def invoke(backend: Any, function_name: str, qualifier: Any, body: Any, headers: Any,
                   response_headers: Any) -> Any:
            if (headers or {}).get("X-Amz-Invocation-Type") != "Event":
                answer = patched(backend, function_name, qualifier, body, headers,
                                 response_headers)
                if answer is not None and len(answer) > LAMBDA_SYNC_PAYLOAD:
                    harness.meter.violations["lambda response over 6 MB"] += 1
                return answer
            future = harness.pool.submit(
                patched, backend, function_name, qualifier, body, headers, {}
            )
            harness.pending.append(future)
            return b""

        monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
        monkeypatch.setattr(httpx.AsyncClient, "send", _counted_send(harness))
        try:
            yield self
        finally:
            self.pool.shutdown(wait=True)


def _counted_send(harness: Harness) -> Any:
    """``AsyncClient.send`` counting each request in flight from its start until its
    response is closed (the fetcher streams bodies, so that is after the last byte)."""
    original = httpx.AsyncClient.send

    async def send(client: httpx.AsyncClient, request: httpx.Request, **kwargs: Any) -> Any:
        meter, host = harness.meter, f"{request.url.host}:{request.url.port}"
        meter.enter(host)
        try:
            response = await original(client, request, **kwargs)
        except BaseException:
            meter.leave(host)
            raise
        if not kwargs.get("stream"):
            meter.leave(host)
            return response
        close, left = response.aclose, []

        async def aclose() -> None:
            try:
                await close()
            finally:
                if not left:
                    left.append(True)
                    meter.leave(host)

        response.aclose = aclose  # type: ignore[method-assign]
        return response

    return send


def transitions(stack: OfflineStack, job_id: str) -> int:
    pages = stack.sfn.get_paginator("get_execution_history")
    return sum(
        1
        for page in pages.paginate(executionArn=stack.execution_arn(job_id))
        for e in page["events"]
        if e["type"].endswith("StateEntered")
    )


def job_summary(stack: OfflineStack, job_id: str) -> dict[str, Any]:
    job = stack.stores.jobs.get(job_id)
    return {
        "status": str(job.status),
        "pages": job.counters.processed,
        "cached": job.counters.cached,
        "transitions": transitions(stack, job_id),
        "events": len(stack.stores.events.after(job_id, 0, 1_000_000)),
    }


def start(stack: OfflineStack, url: str, **options: Any) -> str:
    answer = stack.api("POST", "/jobs", {"url": url, **options})
    if answer["statusCode"] != 202:
        raise RuntimeError(f"POST /jobs answered {answer['statusCode']}: {answer['body']}")
    return str(json.loads(answer["body"])["job_id"])


def _updated_names(params: dict[str, Any]) -> set[str]:
    """Attribute names an UpdateItem's expression sets, adds or removes."""
    names = params.get("ExpressionAttributeNames") or {}
    tokens = re.findall(r"#?[A-Za-z_][A-Za-z0-9_]*", params.get("UpdateExpression", ""))
    return {names.get(t, t) for t in tokens}
