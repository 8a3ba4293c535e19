"""What a crawl costs on AWS, from the billable units of an offline run.

    python -m bench.cost --url URL [--max-pages N] [--concurrency N] [--latency-ms N]
    python -m bench.cost --serve DIR [--start /index.html] ...   (serve a folder on 127.0.0.1)

Runs the whole AWS pipeline offline on the scale harness (bench/harness.py: the
synthesized state machine under moto, the real handlers, async invokes concurrent, a
latency per AWS call, AWS's limits checked) twice: fresh (empty URL cache) and cached
(the same job again: every page from the shared cache). Units are counted as AWS bills
them (DynamoDB capacity from item sizes and indexes, S3 requests by class, Lambda GB-s
per invocation with I/O waits, Step Functions transitions, WebSocket messages, API
requests) and priced at us-east-1 list prices; handler time on this machine stands in
for Lambda time. Prints one JSON line; ``--verbose`` adds the breakdown on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mdcrawl.names import cap_env

from bench.harness import MEMORY_MB, S3_PUT_CLASS, Harness, Meter, job_summary, start
from tests.support.server import serve_directory
from tests.support.sfn import offline_stack, served_stack
from tests.support.stream import Subscriber

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
    "apigw_ws_message": 1.00 / 1e6,  # per 32 KB increment of a message (Meter.ws_messages)
    "logs_ingest_gb": 0.50,
}
LOG_BYTES_PER_INVOCATION = 600  # START/END/REPORT lines plus one structured line


def dollars(meter: Meter, run: dict[str, Any]) -> dict[str, float]:
    p = PRICES
    gb_s = sum(ms / 1000 * MEMORY_MB[name] / 1024 for name, ms in meter.billed_ms.items())
    invocations = sum(meter.invocations.values())
    s3 = [(op, n) for (svc, op), n in meter.calls.items() if svc == "s3"]
    return {
        "lambda_compute": gb_s * p["lambda_gb_s_arm64"],
        "lambda_requests": invocations * p["lambda_request"],
        "dynamodb": meter.write_units * p["ddb_write_unit"] + meter.read_units * p["ddb_read_unit"],
        "s3": sum(n * (p["s3_put"] if op in S3_PUT_CLASS else p["s3_get"]) for op, n in s3),
        "step_functions": run["transitions"] * p["sfn_transition"],
        "api_gateway": meter.invocations["api"] * p["apigw_rest_request"]
        + (meter.ws_messages + meter.invocations["websocket"]) * p["apigw_ws_message"],
        "cloudwatch_logs": invocations * LOG_BYTES_PER_INVOCATION / 1e9 * p["logs_ingest_gb"],
    }


def per_1000(cost: dict[str, float], pages: int) -> dict[str, float]:
    return {k: round(v / max(pages, 1) * 1000, 5) for k, v in cost.items()}


def run_job(
    harness: Harness, url: str, latency_ms: float, options: dict[str, Any], watch: bool = False
) -> dict:
    meter = harness.reset(latency_ms)
    began = time.perf_counter()
    job_id = start(harness.stack, url, **options)
    watcher = subscribed(harness.stack, job_id, "watch-live") if watch else None
    with progress_lines(harness, job_id, began), following(watcher):
        execution = harness.stack.wait(job_id, timeout_s=7200)
    seconds = time.perf_counter() - began
    summary = job_summary(harness.stack, job_id)
    cost = dollars(meter, summary)  # before the replay below: a client's, not the job's
    watched = watch_report(harness.stack, job_id, watcher) if watcher else None
    return {
        **({"watch": watched} if watched else {}),
        **summary,
        "execution": execution["status"],
        "seconds": round(seconds, 1),
        "usd_per_1000": round(sum(cost.values()) / max(summary["pages"], 1) * 1000, 5),
        "by_service": per_1000(cost, summary["pages"]),
        "units": {
            "dynamodb_read_units": meter.read_units,
            "dynamodb_write_units": meter.write_units,
            "dynamodb_write_units_by_table": dict(meter.write_units_by_table),
            "calls": {f"{s}.{o}": n for (s, o), n in sorted(meter.calls.items())},
            "invocations": dict(meter.invocations),
            "billed_ms": dict(meter.billed_ms),
            "cpu_ms": {name: round(ms) for name, ms in meter.cpu_ms.items()},
            "calls_by_function": dict(sorted(meter.calls_by_function.items())),
            "ws_posts": meter.ws_posts,
            "ws_messages": meter.ws_messages,
            "cold_starts": dict(meter.cold_starts),
        },
        "violations": dict(meter.violations),
        "peak_inflight_per_host": max(meter.host_peaks().values(), default=0),
    }


@contextlib.contextmanager
def progress_lines(
    harness: Harness, job_id: str, began: float, every_s: float = 30.0
) -> Iterator[None]:
    """A line on stderr every ``every_s`` while the job runs (a long scale run shows where
    it is): seconds, status and counters (a read the meter does not bill)."""
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(every_s):
            job = harness.stack.stores.jobs.get(job_id)
            c = job.counters
            print(f"progress {time.perf_counter() - began:.0f}s {job.status} discovered="
                  f"{c.discovered} crawled={c.crawled} processed={c.processed} "
                  f"peak_inflight={max(harness.meter.host_peaks().values(), default=0)}",
                  file=sys.stderr, flush=True)

    thread = threading.Thread(target=report, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()


def subscribed(stack: Any, job_id: str, connection_id: str) -> Subscriber:
    subscriber = Subscriber(stack, connection_id)
    if subscriber.connect() != 200:
        raise RuntimeError("the websocket function refused the API key")
    subscriber.subscribe(job_id)
    return subscriber


@contextlib.contextmanager
def following(subscriber: Subscriber | None, every_s: float = 1.0) -> Iterator[None]:
    """The subscriber reads what reached it every ``every_s`` while the job runs, as a
    client does (re-subscribing on a gap, when it sees one)."""
    stop = threading.Event()

    def follow() -> None:
        while subscriber is not None and not stop.wait(every_s):
            subscriber.pump(drain=False)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def watch_report(stack: Any, job_id: str, live: Subscriber) -> dict[str, Any]:
    """What a subscriber saw live during the job against the events table, then a
    replay of the whole log to a new subscriber (timed: one websocket invocation, plus
    one per ``resume`` it sent)."""
    stack.stream.drain()
    live.pump(drain=False)
    stored = [e.to_dict() for e in stack.stores.events.after(job_id, 0, 1_000_000)]
    began = time.perf_counter()
    late = subscribed(stack, job_id, "watch-replay")
    replay_s = time.perf_counter() - began
    late.pump(drain=False)
    return {
        "events": len(stored),
        "live_in_order_gap_free": live.events == stored,
        "live_resyncs": live.resyncs,
        "live_frames": live.frames,
        "replay_complete": late.events == stored,
        "replay_first_invocation_s": round(replay_s, 2),
        "replay_frames": late.frames,
        "replay_resumes": late.resumes,
    }


@contextlib.contextmanager
def target(args: argparse.Namespace) -> Iterator[str]:
    if args.serve:
        with serve_directory(args.serve) as server:
            yield server.url(args.start)
    else:
        yield args.url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="start URL (127.0.0.0/8 only: nothing else is allowed)")
    where.add_argument("--serve", help="a folder to serve on 127.0.0.1 and crawl")
    parser.add_argument("--start", default="/index.html", help="start page under --serve")
    parser.add_argument("--max-pages", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=10.0)
    parser.add_argument("--budget-s", type=int, default=3600, help="the job's time budget")
    parser.add_argument("--verbose", action="store_true", help="the breakdown on stderr")
    parser.add_argument("--fresh-only", action="store_true",
                        help="no second (cached) run: a scale run (python -m bench.bigsite)")
    parser.add_argument("--watch", action="store_true",
                        help="a WebSocket subscriber follows the fresh job live, then a new one "
                             "replays its whole log: the \"watch\" key says what they saw")
    parser.add_argument("--threads", action="store_true",
                        help="invocations as threads of this process (moto in-process), not "
                             "warm worker processes per function (the default)")
    args = parser.parse_args(argv)
    options = {"max_pages": args.max_pages, "concurrency": args.concurrency,
               "budget_s": args.budget_s}
    build = offline_stack if args.threads else served_stack
    # The handlers' metrics (Powertools prints EMF lines, some as the stack shuts down)
    # go to stderr: stdout carries the one JSON line.
    with (
        contextlib.redirect_stdout(sys.stderr),
        pytest.MonkeyPatch.context() as mp,
        build(mp) as stack,
    ):
        # The service's hosted caps (infra config) would refuse a big benchmark job.
        env = stack.runtimes["api"]._environ
        assert env is not None
        env.update({cap_env("max_pages"): str(max(args.max_pages, 2000)),
                    cap_env("budget_s"): str(args.budget_s)})
        harness = Harness(stack, async_workers=max(16, args.concurrency * 2),
                          processes=not args.threads)
        with harness.installed(mp), target(args) as url:
            fresh = run_job(harness, url, args.latency_ms, options, watch=args.watch)
            cached = fresh if args.fresh_only else run_job(harness, url, args.latency_ms, options)
    if args.verbose:
        print(json.dumps({"fresh": fresh, "cached": cached}, indent=1), file=sys.stderr)
    line = {
        "pages": fresh["pages"],
        "completed": fresh["status"] == "completed" and cached["status"] == "completed",
        "seconds": fresh["seconds"],
        "events": fresh["events"],
        "seconds_cached": cached["seconds"],
        "usd_per_1000_pages_fresh": fresh["usd_per_1000"],
        "usd_per_1000_pages_cached": cached["usd_per_1000"],
        "peak_inflight_per_host": max(fresh["peak_inflight_per_host"],
                                      cached["peak_inflight_per_host"]),
        "concurrency": args.concurrency,
        "latency_ms": args.latency_ms,
        "fresh_by_service": fresh["by_service"],
        "cached_by_service": cached["by_service"],
        "limit_violations": {**fresh["violations"], **cached["violations"]},
        "cold_starts_fresh": fresh["units"]["cold_starts"],
        "cold_starts_cached": cached["units"]["cold_starts"],
        "mode": "threads" if args.threads else "processes",
        **({"watch": fresh["watch"]} if args.watch else {}),
    }
    print(json.dumps(line))
    return 0 if line["completed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
