"""One fetched page (invoked asynchronously): HTML -> markdown in S3, its record, counters
and event. Idempotent: a redelivered event changes nothing twice. New events reach the
job's WebSocket subscribers through the events table's stream (the fanout function)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from mdcrawl.adapters.aws.payloads import from_data
from mdcrawl.models import CrawledPage
from mdcrawl.pipeline.process import ProcessDeps, process_page
from mdcrawl.runtime.aws import AwsRuntime

logger = Logger()
tracer = Tracer()
metrics = Metrics()
RUNTIME = AwsRuntime()  # builds nothing until the first page


def handle(event: dict[str, Any], deps: ProcessDeps) -> dict[str, Any]:
    page = from_data(CrawledPage, event)
    record = process_page(page, deps)
    return {"job_id": record.job_id, "url_hash": record.url_hash, "status": str(record.status)}


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(job_id=event.get("job_id"), url=event.get("url"))
    answer = handle(event, RUNTIME.processor)
    metrics.add_metric(name=f"Pages{answer['status'].capitalize()}", unit=MetricUnit.Count, value=1)
    return answer
