"""One batch of leased URLs: cache first, else fetch (behind the SSRF guard); bodies go
to S3, the answer carries states, links and keys (``payloads`` JSON), never bodies."""

from __future__ import annotations

import asyncio
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from mdcrawl.adapters.aws.crawling import CrawlerPorts
from mdcrawl.adapters.aws.payloads import from_data
from mdcrawl.models import UrlState
from mdcrawl.ports import CrawlRequest
from mdcrawl.runtime.aws import AwsRuntime

logger = Logger()
tracer = Tracer()
metrics = Metrics()
RUNTIME = AwsRuntime()  # builds nothing until the first batch


def handle(
    event: dict[str, Any], ports: CrawlerPorts, time_left_s: float | None = None
) -> dict[str, Any]:
    request = from_data(CrawlRequest, event)
    response = asyncio.run(ports.crawl(request, time_left_s))
    for state in UrlState:
        count = sum(1 for o in response.outcomes if o.state is state)
        if count:
            metrics.add_metric(
                name=f"Urls{state.value.capitalize()}", unit=MetricUnit.Count, value=count
            )
    return ports.answer(response)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(job_id=event.get("job_id"))
    metrics.add_metric(name="Batches", unit=MetricUnit.Count, value=1)
    return handle(event, RUNTIME.crawler, context.get_remaining_time_in_millis() / 1000.0)
