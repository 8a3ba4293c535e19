"""One Lambda execution environment of the scale harness: a process of its own running
one function's real handler, warm between invocations, as Lambda reuses environments.

    python -m bench.worker FUNCTION FD      (started by bench.harness.ProcessPool)

The environment is the function's (what infra/pipeline.py sets, plus
``AWS_ENDPOINT_URL``: every AWS call goes to the moto server the harness runs on
127.0.0.1). Over the socket ``FD`` (``multiprocessing.connection``) the parent sends
``("invoke", event, remaining_ms, latency_s)`` and gets back
``(ok, answer, billed_s, counted)``: the handler's answer (or Lambda's errorType and
errorMessage), the time Lambda would bill, and what this process's ``Meter`` counted
(billing units, limits, requests at the crawled site). The first message out is
``("ready", init_s)``: the INIT Lambda bills for a cold start (this process's CPU time
from its start to the handler imported: the interpreter, boto3, the handler module).

Stdout is the parent's stderr (Powertools writes there); nothing here prints.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from multiprocessing.connection import Connection
from types import ModuleType
from typing import Any

from tests.support.handlers import load_handler


class LambdaContext:
    """What Powertools and the handlers read from Lambda's context object."""

    def __init__(self, function_name: str, remaining_ms: int, memory_mb: int) -> None:
        self.function_name = function_name
        self.memory_limit_in_mb = memory_mb
        self.aws_request_id = str(uuid.uuid4())
        self.invoked_function_arn = (
            f"arn:aws:lambda:us-east-1:123456789012:function:{function_name}"
        )
        self._deadline = time.monotonic() + remaining_ms / 1000.0

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def main(name: str, fd: int) -> None:
    import boto3
    from mdcrawl.runtime.aws import AwsRuntime

    module = load_handler(name)
    init_s = time.process_time()  # before the harness's own imports below
    from bench.meter import Meter, billed_seconds
    from tests.support.iam import running_as

    session = boto3.Session()
    meter = Meter()
    meter._table_of = json.loads(os.environ["MDCRAWL_HARNESS_TABLES"])
    session.events.register("provide-client-params", meter.before_call)
    session.events.register("after-call", meter.after_call)
    module.RUNTIME = AwsRuntime(environ=dict(os.environ), session=session)
    _count_requests(meter)
    memory_mb = int(os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512"))
    conn = Connection(fd)
    conn.send(("ready", init_s))
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message[0] != "invoke":
            return
        _, event, remaining_ms, latency_s = message
        meter.latency_s = latency_s
        context = LambdaContext(name, remaining_ms, memory_mb)
        wall, cpu, calls = time.perf_counter(), time.process_time(), meter.thread_calls()
        with running_as(name):
            ok, answer = _run(module, event, context)
        cpu = time.process_time() - cpu
        meter.used_cpu(name, cpu)
        billed = billed_seconds(
            name, time.perf_counter() - wall, cpu, meter.thread_calls() - calls, latency_s
        )
        conn.send((ok, answer, billed, meter.take()))


def _run(module: ModuleType, event: Any, context: LambdaContext) -> tuple[bool, Any]:
    try:
        return True, module.lambda_handler(event, context)
    except Exception as exc:  # noqa: BLE001 - the function's failure, reported as Lambda does
        return False, {"errorType": type(exc).__name__, "errorMessage": str(exc)}


def _count_requests(meter: Any) -> None:
    """Each request to the crawled site as (host, start, end) on the machine-wide
    monotonic clock: the parent sweeps them for the peak in flight."""
    import httpx

    from bench.meter import counted_send

    def start(host: str) -> Any:
        began = time.monotonic()
        return lambda: meter.requests.append((host, began, time.monotonic()))

    httpx.AsyncClient.send = counted_send(httpx.AsyncClient.send, start)  # type: ignore[method-assign]


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
