"""What one run is billed for, counted where the AWS calls are made: billing units as AWS
counts them, AWS's limits checked, requests in flight at the crawled site.

Imports neither moto nor the stack: the harness's worker processes (bench/worker.py)
each keep one ``Meter`` and hand the parent what it counted after every invocation
(``Meter.take`` / ``Meter.merge``).
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mdcrawl.adapters.aws.limits import (
    DYNAMODB_ITEM,
    LAMBDA_ASYNC_PAYLOAD,
    LAMBDA_SYNC_PAYLOAD,
    WEBSOCKET_MESSAGE,
)
from mdcrawl.adapters.aws.schema import SCHEMAS

from tests.support.iam import CURRENT_FUNCTION

# Calls the harness makes to watch the run: not part of the bill.
OBSERVER_CALLS = {("stepfunctions", "DescribeExecution"), ("stepfunctions", "GetExecutionHistory")}
DDB_READS = {"GetItem", "Query", "Scan", "BatchGetItem"}
# Functions billed by their own CPU time plus AWS waits rather than wall time (see
# ``billed_seconds``): the processor converts HTML, single-threaded.
CPU_BOUND = {"processor"}
# Lambda gives a function CPU in proportion to its memory: one full vCPU at 1,769 MB
# (docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
FULL_VCPU_MB = 1769
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
    # Per function: AWS calls ("function:service.Operation") and CPU time, where the
    # money goes inside the totals above.
    calls_by_function: Counter[str] = field(default_factory=Counter)
    cpu_ms: Counter[str] = field(default_factory=Counter)
    peak_inflight: Counter[str] = field(default_factory=Counter)
    _inflight: Counter[str] = field(default_factory=Counter)
    # (host, start, end) of each request made in a worker process, on the machine-wide
    # monotonic clock: the parent finds the peak across processes (``host_peaks``).
    requests: list[tuple[str, float, float]] = field(default_factory=list)
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
            self.calls_by_function[f"{CURRENT_FUNCTION.get()}:{service}.{operation}"] += 1
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
        """A cold start's INIT (``seconds`` of it on a full core): billed time, not an
        invocation, as long as it takes on the function's share of a vCPU."""
        slower = max(1.0, FULL_VCPU_MB / MEMORY_MB[name])
        with self._lock:
            self.billed_ms[name] += math.ceil(seconds * slower * 1000)

    def cold_start(self, name: str, init_s: float) -> None:
        with self._lock:
            self.cold_starts[name] += 1
        self.billed_init(name, init_s)

    def billed(self, name: str, seconds: float) -> None:
        with self._lock:
            self.invocations[name] += 1
            self.billed_ms[name] += max(1, math.ceil(seconds * 1000))

    def used_cpu(self, name: str, seconds: float) -> None:
        with self._lock:
            self.cpu_ms[name] += seconds * 1000

    # -- the crawled site ----------------------------------------------------------
    def enter(self, host: str) -> None:
        with self._lock:
            self._inflight[host] += 1
            self.peak_inflight[host] = max(self.peak_inflight[host], self._inflight[host])

    def leave(self, host: str) -> None:
        with self._lock:
            self._inflight[host] -= 1

    def host_peaks(self) -> Counter[str]:
        """Most requests in flight at once per host: counted live in this process, and
        swept from the intervals worker processes reported."""
        with self._lock:
            peaks, spans = Counter(self.peak_inflight), list(self.requests)
        for host, peak in _interval_peaks(spans).items():
            peaks[host] = max(peaks[host], peak)
        return peaks

    # -- across processes ----------------------------------------------------------
    def take(self) -> dict[str, Any]:
        """What was counted since the last ``take`` (a worker's invocation), reset."""
        with self._lock:
            taken = {name: getattr(self, name) for name in _MERGED}
            for name in _MERGED:
                setattr(self, name, type(taken[name])())
        return taken

    def merge(self, taken: dict[str, Any]) -> None:
        with self._lock:
            for name in _MERGED:
                mine, theirs = getattr(self, name), taken[name]
                if isinstance(mine, Counter):
                    mine.update(theirs)
                elif isinstance(mine, list):
                    mine.extend(tuple(x) for x in theirs)
                else:
                    setattr(self, name, mine + theirs)


# What infra/pipeline.py gives each function (MB).
MEMORY_MB = {
    "api": 512, "websocket": 256, "orchestrator": 512, "finalizer": 1024, "crawler": 384,
    "processor": 1769, "fanout": 128,
}
# What a worker process counts and hands over (the parent counts invocations itself).
_MERGED = ("calls", "read_units", "write_units", "write_units_by_table", "violations",
           "ws_posts", "ws_messages", "requests", "calls_by_function", "cpu_ms")


def billed_seconds(
    name: str, wall_s: float, cpu_s: float, aws_calls: int, latency_s: float
) -> float:
    """What Lambda bills for one invocation of function ``name`` that took ``wall_s`` here
    and ``cpu_s`` of CPU, with ``aws_calls`` calls waiting ``latency_s`` each.

    Lambda runs a function with ``m`` MB on ``m / FULL_VCPU_MB`` of a vCPU, so its CPU
    work takes ``FULL_VCPU_MB / m`` times as long there as on a full core, while its
    waits (AWS calls, the crawled site) take what they take. The processor (CPU-bound)
    is billed that CPU time plus its AWS waits; the others their wall time here (waits
    included) plus what the slower CPU adds. A function given less memory is billed
    for the longer run it would have, never flattered."""
    slower = max(1.0, FULL_VCPU_MB / MEMORY_MB[name])
    if name in CPU_BOUND:
        return cpu_s * slower + aws_calls * latency_s
    return wall_s + cpu_s * (slower - 1.0)


def _interval_peaks(spans: list[tuple[str, float, float]]) -> Counter[str]:
    """The most overlapping intervals per host (an end before a start at the same time)."""
    edges = sorted((t, delta, host) for host, a, b in spans for t, delta in ((a, 1), (b, -1)))
    now: Counter[str] = Counter()
    peaks: Counter[str] = Counter()
    for _, delta, host in edges:
        now[host] += delta
        peaks[host] = max(peaks[host], now[host])
    return peaks



def _updated_names(params: dict[str, Any]) -> set[str]:
    """Attribute names an UpdateItem's expression sets, adds or removes."""
    names = params.get("ExpressionAttributeNames") or {}
    tokens = re.findall(r"#?[A-Za-z_][A-Za-z0-9_]*", params.get("UpdateExpression", ""))
    return {names.get(t, t) for t in tokens}


def counted_send(original: Any, start: Callable[[str], Callable[[], None]]) -> Any:
    """An ``httpx.AsyncClient.send`` that calls ``start(host)`` as each request begins and
    the ``done`` it returned once, when the response is closed (the fetcher streams bodies,
    so that is after the last byte) or the request failed: one request in flight at the
    crawled site, as the site sees it."""

    async def send(client: Any, request: Any, **kwargs: Any) -> Any:
        done = start(f"{request.url.host}:{request.url.port}")
        try:
            response = await original(client, request, **kwargs)
        except BaseException:
            done()
            raise
        if not kwargs.get("stream"):
            done()
            return response
        close, left = response.aclose, []

        async def aclose() -> None:
            try:
                await close()
            finally:
                if not left:
                    left.append(True)
                    done()

        response.aclose = aclose
        return response

    return send
