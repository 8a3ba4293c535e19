"""The job's state machine tasks: ``{"step": "orchestrate"|"fail", "job_id"}``.

orchestrate runs one slice (until the queue drains, the budget ends or this Lambda's
time nears its end) and answers continue/finalize/done; fail marks the job failed. The
frontier in DynamoDB is the checkpoint between calls. Finalize is the finalizer function.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from mdcrawl.pipeline.steps import OrchestratorPorts, run_step
from mdcrawl.runtime.aws import AwsRuntime

logger = Logger()
tracer = Tracer()
metrics = Metrics()
RUNTIME = AwsRuntime()  # builds nothing until the first task


def handle(event: dict[str, Any], ports: OrchestratorPorts, remaining_ms: int) -> dict[str, Any]:
    return run_step(event, ports, remaining_ms)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(job_id=event.get("job_id"), step=event.get("step"))
    answer = handle(event, RUNTIME.orchestrator, context.get_remaining_time_in_millis())
    step = str(event.get("step", "")).capitalize()
    metrics.add_metric(name=f"{step}Steps", unit=MetricUnit.Count, value=1)
    return answer
