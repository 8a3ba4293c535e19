"""What a crawl costs on AWS, from the requests actually made in an offline run.

    python -m bench.cost [--site requests]

Runs the offline stack (tests/support/sfn.py: the synthesized state machine under moto,
the real handlers) over a Debian docs site on 127.0.0.1 twice: fresh (empty URL cache)
and cached (the same URL again: every page served from the shared cache). It counts

- every AWS API call the functions make, by service and operation (botocore
  ``before-call`` hooks on the session the functions' clients come from);
- every function invocation and its duration (wall time of the real handler here; a
  synchronous child call, i.e. the processor's "async" invoke, is not billed to its
  caller, since on Lambda an Event invoke returns at once);
- Step Functions state transitions (the execution history's ``*StateEntered`` events);

and prints dollars per 1,000 pages at us-east-1 list prices. DynamoDB units are
estimated per call (items here are small: 1 unit per item read or written, x2 for a
write to an item a GSI projects, transactions x2); handler time on this machine stands
in for Lambda time (same code, so the ratio fresh/cached is the meaningful number).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.support.server import serve_directory
from tests.support.sfn import OfflineStack, offline_stack
from tests.support.sites import SITES

# us-east-1 list prices (USD).
PRICES = {
    "lambda_gb_s_arm64": 0.0000133334,
    "lambda_request": 0.20 / 1e6,
    "ddb_write_unit": 0.625 / 1e6,
    "ddb_read_unit": 0.125 / 1e6,
    "s3_put": 0.005 / 1000,  # PUT, COPY, POST, LIST (multipart create/part/complete too)
    "s3_get": 0.0004 / 1000,  # GET, HEAD and the rest
    "sfn_transition": 0.025 / 1000,
    "apigw_rest_request": 3.50 / 1e6,
    "apigw_ws_message": 1.00 / 1e6,
}
MEMORY_MB = {"api": 512, "websocket": 256, "orchestrator": 512, "crawler": 512, "processor": 1769}
S3_PUT_CLASS = {
    "PutObject",
    "CreateMultipartUpload",
    "UploadPart",
    "CompleteMultipartUpload",
    "CopyObject",
    "ListObjectsV2",
}
DDB_READS = {"GetItem", "Query", "Scan", "BatchGetItem"}
DDB_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
INDEXED_TABLES = ("frontier", "jobs", "connections")  # writes there also write a GSI
# Calls this script makes itself to watch the run: not part of the bill.
OBSERVER_CALLS = {("stepfunctions", "DescribeExecution"), ("stepfunctions", "GetExecutionHistory")}


class Dispatch:
    """One hook on the session, registered before any client exists (a client copies the
    session's hooks when it is created), forwarding to the meter of the current run."""

    def __init__(self) -> None:
        self.meter: Meter | None = None

    def __call__(self, **kwargs: Any) -> None:
        if self.meter is not None:
            self.meter.on_call(**kwargs)


@dataclass
class Meter:
    calls: Counter[tuple[str, str]] = field(default_factory=Counter)
    ddb_read_units: float = 0.0
    ddb_write_units: float = 0.0
    invocations: Counter[str] = field(default_factory=Counter)
    billed_ms: Counter[str] = field(default_factory=Counter)
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on_call(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        service, operation = model.service_model.service_name, model.name
        if (service, operation) in OBSERVER_CALLS:
            return
        with self._lock:
            self.calls[(service, operation)] += 1
            if service == "dynamodb":
                self._units(operation, params)

    def _units(self, operation: str, params: dict[str, Any]) -> None:
        table = str(params.get("TableName", ""))
        indexed = 2 if any(t in table for t in INDEXED_TABLES) else 1
        if operation in DDB_READS:
            self.ddb_read_units += 1
        elif operation == "BatchWriteItem":
            self.ddb_write_units += sum(len(v) for v in params["RequestItems"].values())
        elif operation == "TransactWriteItems":
            self.ddb_write_units += 2 * len(params["TransactItems"])
        elif operation in DDB_WRITES:
            self.ddb_write_units += indexed

    def timed(self, name: str, call: Any) -> Any:
        """Run one invocation; its billed time excludes synchronous child invocations."""
        frames = self._local.__dict__.setdefault("frames", [])
        frames.append(0.0)
        start = time.perf_counter()
        try:
            return call()
        finally:
            elapsed = time.perf_counter() - start
            child = frames.pop()
            if frames:
                frames[-1] += elapsed
            with self._lock:
                self.invocations[name] += 1
                # Lambda bills per ms, rounded up.
                self.billed_ms[name] += max(1, int((elapsed - child) * 1000 + 0.999))


def measure(stack: OfflineStack, url: str, meter: Meter, **options: Any) -> dict[str, Any]:
    answer = stack.api("POST", "/jobs", {"url": url, **options})
    job_id = json.loads(answer["body"])["job_id"]
    execution = stack.wait(job_id, timeout_s=1800)
    history = stack.history(job_id)
    job = stack.stores.jobs.get(job_id)
    return {
        "status": execution["status"],
        "pages": job.counters.processed,
        "cached": job.counters.cached,
        "transitions": sum(1 for e in history if e["type"].endswith("StateEntered")),
        "pushes": sum(len(v) for v in stack.ws.messages.values()),
    }


def dollars(meter: Meter, run: dict[str, Any]) -> dict[str, float]:
    p = PRICES
    gb_s = sum(ms / 1000 * MEMORY_MB[name] / 1024 for name, ms in meter.billed_ms.items())
    s3 = [(op, n) for (svc, op), n in meter.calls.items() if svc == "s3"]
    rest_requests = meter.invocations["api"]
    return {
        "lambda compute": gb_s * p["lambda_gb_s_arm64"],
        "lambda requests": sum(meter.invocations.values()) * p["lambda_request"],
        "dynamodb": meter.ddb_write_units * p["ddb_write_unit"]
        + meter.ddb_read_units * p["ddb_read_unit"],
        "s3": sum(n * (p["s3_put"] if op in S3_PUT_CLASS else p["s3_get"]) for op, n in s3),
        "step functions": run["transitions"] * p["sfn_transition"],
        "api gateway": rest_requests * p["apigw_rest_request"]
        + (run["pushes"] + meter.invocations["websocket"]) * p["apigw_ws_message"],
    }


def run_once(stack: OfflineStack, url: str, label: str, dispatch: Dispatch) -> None:
    meter = Meter()
    dispatch.meter = meter
    original = stack.invoke

    def invoke(name: str, event: dict[str, Any]) -> Any:
        return meter.timed(name, lambda: original(name, event))

    stack.invoke = invoke  # type: ignore[method-assign]
    stack.ws.messages.clear()
    try:
        run = measure(stack, url, meter)
    finally:
        stack.invoke = original  # type: ignore[method-assign]
        dispatch.meter = None
    report(label, meter, run)


def report(label: str, meter: Meter, run: dict[str, Any]) -> None:
    pages = max(run["pages"], 1)
    cost = dollars(meter, run)
    print(f"\n== {label}: {run['status']}, {run['pages']} pages ({run['cached']} from cache)")
    print("   AWS calls by operation:")
    for (service, operation), n in sorted(meter.calls.items()):
        print(f"     {service:>24} {operation:<28} {n:6d}  ({n / pages:.2f}/page)")
    print("   invocations and billed ms:")
    for name in sorted(meter.invocations):
        n, ms = meter.invocations[name], meter.billed_ms[name]
        print(f"     {name:>12} {n:5d} calls {ms:8d} ms  ({MEMORY_MB[name]} MB)")
    print(
        f"   DynamoDB units (est.): {meter.ddb_read_units:.0f} read, "
        f"{meter.ddb_write_units:.0f} write; state transitions {run['transitions']}; "
        f"WebSocket pushes {run['pushes']}"
    )
    total = sum(cost.values())
    print("   USD per 1,000 pages:")
    for item, usd in cost.items():
        print(f"     {item:>16} ${usd / pages * 1000:9.4f}")
    print(f"     {'total':>16} ${total / pages * 1000:9.4f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", default="requests", choices=sorted(SITES))
    args = parser.parse_args(argv)
    site = SITES[args.site]
    if not (site.root / site.start.lstrip("/")).is_file():
        print(f"{site.package} is not installed: run `make fixtures`")
        return 1
    with (
        pytest.MonkeyPatch.context() as mp,
        offline_stack(mp) as stack,
        serve_directory(site.root) as server,
    ):
        url = server.url(site.start)
        dispatch = Dispatch()
        stack.aws.session.events.register("before-call.*.*", dispatch)
        run_once(stack, url, "fresh (empty URL cache)", dispatch)
        run_once(stack, url, "cached (same site again, cache fresh)", dispatch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
