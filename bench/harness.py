"""The scale harness: the offline stack (tests/support/sfn.py: the synthesized state
machine under moto, the real handlers) made to behave like AWS where it matters for
scale and cost.

- **Execution environments are processes** (``processes=True``, over ``served_stack``:
  moto as a server on 127.0.0.1, the state machine running in it): each function's
  invocations run in warm ``python -m bench.worker`` processes of its own
  (``ProcessPool``). An invocation takes an idle process of its function or starts one
  (a cold start, counted per process start and billed the INIT CPU time the process
  measured); processes are reused afterwards, as Lambda reuses environments, and a
  process that overruns the function's timeout is killed (``Sandbox.Timedout``). The
  default of ``bench.cost``. Without it (``offline_stack``), invocations are threads of
  this interpreter and ``Environments`` counts cold starts from ``INIT_MS``: what the
  e2e tests use, for speed and fault injection.
- **Async invokes are asynchronous**: an ``Event`` invoke is queued on a pool of
  ``async_workers`` threads and answered 202 at once (moto runs it inline).
- **Latency per AWS call**: every call a function makes waits ``latency_ms`` first
  (same-region round trips are 5-20 ms; moto answers in well under one).
- **Limits enforced**: Lambda payloads (6 MB sync request and response, 256 KB async),
  DynamoDB items (400 KB), WebSocket messages (128 KB) are checked on every call and
  counted as violations (the run goes on, the report shows them); timeouts end the
  invocation (processes).
- **Billing units as AWS counts them** (``bench/meter.py``): DynamoDB capacity from item
  sizes (1 KB per write unit, plus one per keys-only index entry a write adds, moves or
  removes; 4 KB per read unit, halved for eventually consistent reads), S3 requests by
  class, Lambda GB-s per invocation rounded up to the ms (I/O waits included, as Lambda
  bills them; the processor its own CPU time plus its AWS waits, what it would take with
  a vCPU of its own), Step Functions transitions, WebSocket messages (in 32 KB
  increments, as API Gateway meters them: a 96 KiB frame is three). Each worker process
  counts its own calls and hands the counts over with every answer.
- **Per-host in-flight requests** as the crawled site sees them: each worker records
  its requests as intervals on the machine-wide monotonic clock, the parent sweeps them
  for the peak (in-thread, one live counter).

Not modelled: the crawled site's own latency is whatever the server has; the machine's
two shared cores stand in for each environment's vCPU (wall time of I/O-bound functions
is inflated by the load).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
from mdcrawl.adapters.aws.limits import (
    LAMBDA_SYNC_PAYLOAD,
)
from moto.awslambda_simple.models import LambdaSimpleBackend

from bench.meter import (  # noqa: F401 - re-exported: bench.cost and tests use them
    CPU_BOUND,
    MEMORY_MB,
    S3_PUT_CLASS,
    Meter,
    billed_seconds,
    counted_send,
    ws_billed_messages,
)
from tests.support.aws import FAKE_CREDENTIALS, REGION, MotoAws
from tests.support.sfn import OfflineStack, error_named


@dataclass
class Environments:  # the in-thread mode's; ProcessPool has real ones
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
# Lambda's timeout per function (infra/pipeline.py FUNCTIONS; a unit test compares).
TIMEOUT_S = {"api": 29, "websocket": 29, "orchestrator": 120, "crawler": 60, "finalizer": 900,
             "fanout": 60, "processor": 60}
INIT_TIMEOUT_S = 120.0  # a worker's start on a loaded machine (Lambda allows 10 s)
TIMEOUT_GRACE_S = 1.0  # the pipe's delay on a loaded machine, on top of the timeout
ROOT = Path(__file__).resolve().parents[1]

INIT_MS = {"api": 2300.0, "websocket": 2300.0, "orchestrator": 1600.0, "crawler": 2900.0,
           "processor": 2600.0}


class Worker:
    """One execution environment: a ``python -m bench.worker`` process, warm between
    invocations, talking to the parent over a socket pair."""

    def __init__(self, name: str, env: dict[str, str]) -> None:
        ours, theirs = socket.socketpair()
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.worker", name, str(theirs.fileno())],
            cwd=ROOT, env=env, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
            stdout=2,  # Powertools' lines go to stderr: stdout is the bench's JSON line
        )
        theirs.close()
        self.conn = Connection(ours.detach())
        _, self.init_s = self._receive(INIT_TIMEOUT_S)

    def invoke(self, event: Any, remaining_ms: int, latency_s: float) -> tuple[Any, ...]:
        self.conn.send(("invoke", event, remaining_ms, latency_s))
        answer: tuple[Any, ...] = self._receive(remaining_ms / 1000.0 + TIMEOUT_GRACE_S)
        return answer

    def _receive(self, timeout_s: float) -> Any:
        if not self.conn.poll(timeout_s):
            self.process.kill()  # Lambda ends an environment that overran its timeout
            self.stop()
            raise TimeoutError(f"{self.name}: no answer within {timeout_s:.0f} s")
        return self.conn.recv()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(("stop",))
        self.conn.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class ProcessPool:
    """Each function's execution environments as warm worker processes: an invocation
    takes an idle one of its function or starts one (a cold start: counted, billed the
    INIT the process measured), and gives it back when it ends, as Lambda reuses them.
    A worker that overruns the function's timeout is killed (Lambda ends the
    environment) and the invocation fails ``Sandbox.Timedout``."""

    def __init__(self, env_of: Any) -> None:
        self._env_of = env_of  # function name -> the process environment
        self._idle: dict[str, list[Worker]] = {}
        self._all: list[Worker] = []
        self._lock = threading.Lock()
        self.started: Counter[str] = Counter()

    def invoke(self, name: str, event: Any, remaining_ms: int, meter: Meter) -> Any:
        worker = self._take(name, meter)
        try:
            ok, answer, billed_s, counted = worker.invoke(event, remaining_ms, meter.latency_s)
        except TimeoutError as exc:
            meter.violations[f"lambda timeout ({name})"] += 1
            meter.billed(name, remaining_ms / 1000.0)
            raise error_named("Sandbox.Timedout", str(exc)) from None
        except (EOFError, OSError) as exc:  # the process died: Lambda's Runtime.ExitError
            worker.stop()
            raise error_named("Runtime.ExitError", f"{name}: {exc!r}") from None
        with self._lock:
            self._idle.setdefault(name, []).append(worker)
        meter.merge(counted)
        meter.billed(name, billed_s)
        if not ok:
            raise error_named(answer["errorType"], answer["errorMessage"])
        return answer

    def _take(self, name: str, meter: Meter) -> Worker:
        with self._lock:
            idle = self._idle.get(name)
            if idle:
                return idle.pop()
            self.started[name] += 1
        worker = Worker(name, self._env_of(name))
        with self._lock:
            self._all.append(worker)
        meter.cold_start(name, worker.init_s)
        return worker

    def close(self) -> None:
        with self._lock:
            workers, self._all, self._idle = self._all, [], {}
        for worker in workers:
            worker.stop()


def worker_env(aws: MotoAws, function_env: Mapping[str, str], name: str) -> dict[str, str]:
    """A worker process's environment: Lambda's for the function (``function_env``, what
    infra/pipeline.py sets), every AWS call to the moto server."""
    if aws.endpoint is None:
        raise ValueError("worker processes need the moto server (served_moto)")
    tables = {real: table.value for table, real in aws.names.items()}
    return {
        **os.environ, **function_env,
        "AWS_ENDPOINT_URL": aws.endpoint, "AWS_DEFAULT_REGION": REGION,
        **{k.upper(): v for k, v in FAKE_CREDENTIALS.items()},
        "AWS_LAMBDA_FUNCTION_NAME": name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(MEMORY_MB[name]),
        "MDCRAWL_HARNESS_TABLES": json.dumps(tables),
    }


class Harness:
    """Installs the meter's hooks on an offline stack and makes Event invokes async.

    ``processes=True`` (needs ``served_stack``: moto as a server every process can
    reach) runs every invocation in a warm worker process of its function
    (``ProcessPool``); otherwise invocations are threads of this interpreter, with
    ``Environments`` counting cold starts."""

    def __init__(
        self, stack: OfflineStack, async_workers: int = 16, processes: bool = False
    ) -> None:
        self.stack = stack
        self.meter = Meter()
        self.environments = Environments(dict(INIT_MS))
        self.pool = ThreadPoolExecutor(max_workers=async_workers, thread_name_prefix="lambda-event")
        self.pending: list[Any] = []
        self.processes: ProcessPool | None = None
        events = stack.aws.session.events
        events.register("provide-client-params", self._before)
        events.register("after-call", self._after)
        if processes:
            self.processes = ProcessPool(self._worker_env)
            self._process_invoke(self.processes)
        else:
            self._timed_invoke()

    def _worker_env(self, name: str) -> dict[str, str]:
        return worker_env(self.stack.aws, self.stack.runtimes[name]._environ or {}, name)

    def _process_invoke(self, processes: ProcessPool) -> None:
        stack, harness = self.stack, self

        def invoke(name: str, event: dict[str, Any]) -> Any:
            remaining_ms = stack.remaining_ms.get(name, TIMEOUT_S[name] * 1000)
            return processes.invoke(name, event, remaining_ms, harness.meter)

        stack.invoke = invoke  # type: ignore[method-assign]

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
                own, waits = time.thread_time() - cpu, meter.thread_calls() - calls
                meter.used_cpu(name, own)
                wall = time.perf_counter() - start
                meter.billed(name, billed_seconds(name, wall, own, waits, meter.latency_s))

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
            if self.processes is not None:
                self.processes.close()


def _counted_send(harness: Harness) -> Any:
    """``AsyncClient.send`` counting each request in flight at the site (bench/meter.py)."""

    def start(host: str) -> Any:
        harness.meter.enter(host)
        return lambda: harness.meter.leave(host)

    return counted_send(httpx.AsyncClient.send, start)


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
