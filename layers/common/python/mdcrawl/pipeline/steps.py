"""The orchestrator's workflow steps, as the state machine calls them: one payload
``{"step": "orchestrate"|"fail", "job_id", ...}`` in, ``{"job_id", "next"}`` out.

A runtime that runs the pipeline as separate tasks (the AWS state machine) calls
``run_step``; each step is the pipeline's own function (``orchestrate``, ``fail``) plus
what a task boundary needs around it: a slice that stops before the task's time ends,
leases of a slice that died given back, and a person's sentence for a workflow error.
Finalize is a task of its own, with its own time (``finalize_task.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..models import UrlState
from ..ports import Frontier
from .jobs import JobDeps, fail, get_job
from .orchestrate import DONE, OrchestratorDeps, Tuning, orchestrate

if TYPE_CHECKING:  # the webhook's sender (httpx) is loaded only by a notify step
    from .notify import NotifyDeps

log = logging.getLogger(__name__)

# The orchestrator stops claiming this long before its own timeout: in-flight crawler
# calls (60 s timeout, infra/pipeline.py) must come back before the slice ends.
CRAWLER_TIMEOUT_S = 60.0
SLICE_SAFETY_MARGIN_S = CRAWLER_TIMEOUT_S + 10.0
# A crawl call per ``concurrency`` URLs, not per half of them: each call is a crawler
# invocation, an S3 PUT of its bodies' pack, and the processor event its pages make (one
# invocation and one PUT of their markdown): half as many of each per page. Two calls
# are still in flight (``in_flight_per_slot``), so the host's slots stay busy while one
# call's outcomes are applied.
SLICE_TUNING = Tuning(batch_per_slot=1.0)


@dataclass(frozen=True)
class OrchestratorPorts:
    orchestrate: OrchestratorDeps
    job: JobDeps


def run_step(
    event: Mapping[str, Any],
    ports: OrchestratorPorts,
    remaining_ms: int,
    notifier: Callable[[], NotifyDeps] | None = None,
) -> dict[str, Any]:
    """``{"step": "orchestrate"|"fail"|"notify", "job_id", ...}`` -> ``{"job_id", "next"}``
    (``finalize`` is a task of its own: ``finalize_task.run_finalize``; ``notify`` comes
    from EventBridge at a job's end and sends its webhook)."""
    step, job_id = event.get("step"), event.get("job_id")
    if not isinstance(job_id, str) or not job_id:
        raise ValueError("the state machine input has no job_id")
    if step == "orchestrate":
        return {"job_id": job_id, "next": orchestrate_step(job_id, ports, remaining_ms)}
    if step == "fail":
        fail(job_id, ports.job, describe_error(event.get("error")))
        return {"job_id": job_id, "next": DONE}
    if step == "notify" and notifier is not None:
        from .notify import notify

        notify(job_id, event.get("event") or {}, notifier())
        return {"job_id": job_id, "next": DONE}
    raise ValueError(f"unknown step {step!r}")


def orchestrate_step(job_id: str, ports: OrchestratorPorts, remaining_ms: int) -> str:
    """One slice: leases of a dead slice back first, then claim until the slice's end."""
    deps = ports.orchestrate
    reclaimed = reclaim_dead_leases(job_id, deps.frontier, deps.clock.now())
    if reclaimed:
        log.warning(
            "job %s: %d leases of a slice that died went back to the queue", job_id, reclaimed
        )
    job = get_job(job_id, deps.jobs)
    stop_at = slice_end(deps.clock.now(), remaining_ms, job.deadline)
    return asyncio.run(orchestrate(job_id, deps, stop_at, SLICE_TUNING))


def slice_end(now: float, remaining_ms: int, deadline: float | None) -> float:
    """When an orchestrator slice stops claiming: before its task's timeout (leaving room
    for in-flight crawls), never past the job's deadline."""
    end = now + max(remaining_ms / 1000.0 - SLICE_SAFETY_MARGIN_S, 0.0)
    return end if deadline is None else min(end, deadline)


def reclaim_dead_leases(
    job_id: str, frontier: Frontier, now: float, tuning: Tuning | None = None
) -> int:
    """A job has one execution, which runs one slice at a time, and a slice waits for its
    own crawls before it returns: a lease still held when a slice starts belongs to one
    that died. Its URLs go back to the queue now (counting the attempt), not in 5 min."""
    tuning = tuning or Tuning()
    if frontier.counts(job_id)[UrlState.LEASED] == 0:
        return 0
    # Every lease was taken at or before now, so it expires by now + lease_s.
    return frontier.reclaim_expired(job_id, now + tuning.lease_s + 1, tuning.max_attempts)


def describe_error(error: Any) -> str:
    """A person's sentence from a Step Functions Catch payload ``{"Error", "Cause"}``."""
    if not isinstance(error, Mapping):
        return "the job's workflow failed"
    name, cause = str(error.get("Error") or "Error"), error.get("Cause")
    if isinstance(cause, str):
        with contextlib.suppress(ValueError):
            detail = json.loads(cause)
            if isinstance(detail, dict) and detail.get("errorMessage"):
                cause = str(detail["errorMessage"])
    return f"{name}: {cause}"[:1000] if cause else name
