"""The job's workflow steps, as the state machine calls them: one payload
``{"step": "orchestrate"|"finalize"|"fail", "job_id", ...}`` in, ``{"job_id", "next"}`` out.

A runtime that runs the pipeline as separate tasks (the AWS state machine) calls
``run_step``; each step is the pipeline's own function (``orchestrate``, ``finalize``,
``fail``) plus what a task boundary needs around it: a slice that stops before the
task's time ends, leases of a slice that died given back, pages the process step never
recorded handed to it again (``rehand.py``), and a person's sentence for a workflow error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from ..assemble import OutputOpener
from ..models import UrlState
from ..ports import Frontier
from .finalize import WAIT, FinalizeDeps, fail, finalize
from .jobs import JobDeps, get_job
from .orchestrate import DONE, OrchestratorDeps, Tuning, orchestrate
from .recover import RecoverDeps
from .rehand import RehandDeps, reprocess_if_stuck

log = logging.getLogger(__name__)

# The orchestrator stops claiming this long before its own timeout: in-flight crawler
# calls (60 s timeout, infra/pipeline.py) must come back before the slice ends.
CRAWLER_TIMEOUT_S = 60.0
SLICE_SAFETY_MARGIN_S = CRAWLER_TIMEOUT_S + 10.0


@dataclass(frozen=True)
class FinalizeIO:
    """Where one finalize run reads and writes: its deps (the blob store may prefetch),
    the opener of each output and where each output ends up (``finalize``'s arguments)."""

    deps: FinalizeDeps
    open_output: OutputOpener
    output_key: Callable[[str], str] | None = None


# A runtime's way of running one finalize: a context that yields its FinalizeIO, makes
# the outputs visible when the block ends normally and discards them when it raises.
FinalizeSession = Callable[[str, FinalizeDeps], AbstractContextManager[FinalizeIO]]


@dataclass(frozen=True)
class StepPorts:
    orchestrate: OrchestratorDeps
    finalize: FinalizeDeps
    recover: RecoverDeps
    job: JobDeps
    finalize_session: FinalizeSession

    @property
    def rehand(self) -> RehandDeps:
        f = self.finalize
        return RehandDeps(f, self.recover, self.orchestrate.frontier, self.orchestrate.invoker)


def run_step(event: Mapping[str, Any], ports: StepPorts, remaining_ms: int) -> dict[str, Any]:
    """``{"step": "orchestrate"|"finalize"|"fail", "job_id", ...}`` -> ``{"job_id", "next"}``."""
    step, job_id = event.get("step"), event.get("job_id")
    if not isinstance(job_id, str) or not job_id:
        raise ValueError("the state machine input has no job_id")
    if step == "orchestrate":
        return {"job_id": job_id, "next": orchestrate_step(job_id, ports, remaining_ms)}
    if step == "finalize":
        return {"job_id": job_id, "next": finalize_step(job_id, ports)}
    if step == "fail":
        fail(job_id, ports.job, describe_error(event.get("error")))
        return {"job_id": job_id, "next": DONE}
    raise ValueError(f"unknown step {step!r}")


def orchestrate_step(job_id: str, ports: StepPorts, remaining_ms: int) -> str:
    """One slice: leases of a dead slice back first, then claim until the slice's end."""
    deps = ports.orchestrate
    reclaimed = reclaim_dead_leases(job_id, deps.frontier, deps.clock.now())
    if reclaimed:
        log.warning(
            "job %s: %d leases of a slice that died went back to the queue", job_id, reclaimed
        )
    job = get_job(job_id, deps.jobs)
    stop_at = slice_end(deps.clock.now(), remaining_ms, job.deadline)
    return asyncio.run(orchestrate(job_id, deps, stop_at))


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


def finalize_step(job_id: str, ports: StepPorts) -> str:
    """Finalize through the runtime's session; while it waits, re-hand stuck pages."""
    with ports.finalize_session(job_id, ports.finalize) as io:
        answer = finalize(job_id, io.deps, io.open_output, io.output_key)
    if answer == WAIT:
        reprocess_if_stuck(job_id, ports.rehand)
    return answer


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
