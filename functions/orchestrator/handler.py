"""The job's state machine tasks: ``{"step": "orchestrate"|"fail", "job_id"}``, and
EventBridge's ``{"step": "notify", "job_id", "event"}`` (the job's webhook).

orchestrate runs one slice (until the queue drains, the budget ends or this Lambda's
time nears its end) and answers continue/finalize/done; fail marks the job failed. The
frontier in DynamoDB is the checkpoint between calls. Finalize is the finalizer function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from mdcrawl.pipeline.steps import OrchestratorPorts, run_step
from mdcrawl.runtime.aws import AwsRuntime

if TYPE_CHECKING:
    from mdcrawl.pipeline.notify import NotifyDeps

logger = Logger()
tracer = Tracer()
metrics = Metrics()
RUNTIME = AwsRuntime()  # builds nothing until the first task


def handle(
    event: dict[str, Any],
    ports: OrchestratorPorts,
    remaining_ms: int,
    notifier: Callable[[], NotifyDeps] | None = None,
) -> dict[str, Any]:
    return run_step(event, ports, remaining_ms, notifier)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(job_id=event.get("job_id"), step=event.get("step"))
    answer = handle(
        event,
        RUNTIME.orchestrator,
        context.get_remaining_time_in_millis(),
        lambda: RUNTIME.notifier,
    )
    step = str(event.get("step", "")).capitalize()
    metrics.add_metric(name=f"{step}Steps", unit=MetricUnit.Count, value=1)
    return answer
