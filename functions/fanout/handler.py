"""New events -> the job's WebSocket subscribers, in order, batched.

Triggered by the events table's DynamoDB Stream (one invocation at a time per shard,
so a job's events arrive here in seq order); pushes each job's new events to every
connection subscribed to it as frames of several events (``service.ws.fan_out``). The
functions that append events only write them. A store error fails the batch: Lambda
retries it, in order, before any later record (a client drops what it already has).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from mdcrawl.adapters.aws.stream import stream_events
from mdcrawl.runtime.aws import AwsRuntime
from mdcrawl.service.deps import WsDeps
from mdcrawl.service.ws import fan_out

logger = Logger()
tracer = Tracer()
metrics = Metrics()
RUNTIME = AwsRuntime()  # builds nothing until the first batch


def handle(event: dict[str, Any], deps: WsDeps) -> dict[str, Any]:
    events = stream_events(event.get("Records") or [])
    outcome = fan_out(events, deps)
    return {
        "events": len(events),
        "frames": outcome.delivered,
        "gone": outcome.removed,
        "failed": outcome.failed,
    }


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    answer = handle(event, RUNTIME.fanout)
    metrics.add_metric(name="EventsFannedOut", unit=MetricUnit.Count, value=answer["events"])
    metrics.add_metric(name="FramesPushed", unit=MetricUnit.Count, value=answer["frames"])
    return answer
