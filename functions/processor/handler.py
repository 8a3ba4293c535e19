"""Fetched pages (invoked asynchronously, one event per crawl batch): HTML -> markdown
in S3, each page's record, the job's counters once, the pages' events together (one
write). Idempotent: a redelivered event changes nothing twice. New events reach the
job's WebSocket subscribers through the events table's stream (the fanout function)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from mdcrawl.adapters.aws.eventbuffer import collecting
from mdcrawl.adapters.aws.invoker import PAGES
from mdcrawl.adapters.aws.payloads import from_data
from mdcrawl.models import CrawledPage
from mdcrawl.pipeline.process import ProcessDeps
from mdcrawl.pipeline.process_batch import process_pages
from mdcrawl.runtime.aws import AwsRuntime

logger = Logger()
tracer = Tracer()
metrics = Metrics()
RUNTIME = AwsRuntime()  # builds nothing until the first page


def pages_of(event: dict[str, Any]) -> list[CrawledPage]:
    """A batch (``{"pages": [...]}``) or one page (a re-handed page, an older sender)."""
    raw = event.get(PAGES, [event])
    return [from_data(CrawledPage, page) for page in raw]


def handle(
    event: dict[str, Any], deps: ProcessDeps, time_left: Callable[[], float] | None = None
) -> dict[str, Any]:
    # The invocation's events are stored together, after its records (eventbuffer.py).
    with collecting(deps.events):
        records = process_pages(pages_of(event), deps, time_left)
    return {
        "job_id": records[0].job_id if records else event.get("job_id"),
        "pages": [{"url_hash": r.url_hash, "status": str(r.status)} for r in records],
    }


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    pages = event.get(PAGES) or [event]
    logger.append_keys(job_id=pages[0].get("job_id"), urls=[p.get("url") for p in pages])
    answer = handle(
        event, RUNTIME.processor, lambda: context.get_remaining_time_in_millis() / 1000.0
    )
    for status, count in Counter(p["status"] for p in answer["pages"]).items():
        metrics.add_metric(name=f"Pages{status.capitalize()}", unit=MetricUnit.Count, value=count)
    return answer
