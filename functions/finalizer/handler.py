"""The job's Finalize task: ``{"step": "finalize", "job_id"}`` -> wait/done.

Its own function with its own timeout (15 minutes; an orchestrator slice has 2): the
assembly of a 10,000-page job reads every page and writes docs.md, pages.zip and the
rest. Answers ``wait`` at once while pages are still being processed (the state machine
waits and asks again). An interrupted run publishes nothing and is run again.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from mdcrawl.pipeline.finalize_task import FinalizerPorts, run_finalize
from mdcrawl.runtime.aws import AwsRuntime

logger = Logger()
tracer = Tracer()
metrics = Metrics()
RUNTIME = AwsRuntime()  # builds nothing until the first task


def handle(event: dict[str, Any], ports: FinalizerPorts) -> dict[str, Any]:
    return run_finalize(event, ports)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(job_id=event.get("job_id"))
    answer = handle(event, RUNTIME.finalizer)
    name = "FinalizeWaits" if answer["next"] == "wait" else "Finalized"
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
    return answer
