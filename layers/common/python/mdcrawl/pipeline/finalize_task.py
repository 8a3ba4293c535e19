"""Finalize as a task of its own (the finalizer function on AWS, 15 minutes): assembly
of a 10,000-page job takes minutes, more than an orchestrator slice has.

``run_finalize`` answers ``wait`` until every page has its record (and meanwhile hands
pages the process step never recorded to it again, ``rehand.py``) and ``done`` once the
outputs are written and the job completed. A run that is interrupted midway (the
function timing out or crashing, a storage error) leaves nothing visible: the runtime's
``FinalizeSession`` publishes outputs only when the run ends normally and aborts its
uploads otherwise, and the job is completed by one conditional transition at the end.
The state machine then runs it again, which reads the same records and writes the same
bytes: the outputs do not depend on which attempt wrote them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from ..assemble import OutputOpener
from ..ports import Frontier, Invoker
from .finalize import WAIT, FinalizeDeps, finalize
from .recover import RecoverDeps
from .rehand import RehandDeps, reprocess_if_stuck


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
class FinalizerPorts:
    finalize: FinalizeDeps
    recover: RecoverDeps
    frontier: Frontier
    invoker: Invoker  # only ``process``: pages handed to the process step again
    session: FinalizeSession

    @property
    def rehand(self) -> RehandDeps:
        return RehandDeps(self.finalize, self.recover, self.frontier, self.invoker)


def run_finalize(event: Mapping[str, Any], ports: FinalizerPorts) -> dict[str, Any]:
    """``{"step": "finalize", "job_id"}`` -> ``{"job_id", "next": "wait"|"done"}``."""
    step, job_id = event.get("step"), event.get("job_id")
    if not isinstance(job_id, str) or not job_id:
        raise ValueError("the state machine input has no job_id")
    if step != "finalize":
        raise ValueError(f"the finalizer runs the finalize step, not {step!r}")
    return {"job_id": job_id, "next": finalize_step(job_id, ports)}


def finalize_step(job_id: str, ports: FinalizerPorts) -> str:
    """Finalize through the runtime's session; while it waits, re-hand stuck pages."""
    with ports.session(job_id, ports.finalize) as io:
        answer = finalize(job_id, io.deps, io.open_output, io.output_key)
    if answer == WAIT:
        reprocess_if_stuck(job_id, ports.rehand)
    return answer
