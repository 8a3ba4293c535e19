"""LambdaInvoker: the orchestrator reaches the crawler (synchronously) and the
processor (asynchronously) through Lambda invoke. Payloads carry ids, urls and S3
keys, never page bodies (an invoke payload is capped at 6 MB, 1 MB for Event)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ...errors import StoreError
from ...models import CrawledPage
from ...ports import CrawlRequest, CrawlResponse
from .calls import call
from .payloads import dumps, loads


class InvocationFailed(StoreError):
    """The function ran and failed (``FunctionError``), or Lambda refused the call."""

    def __init__(self, function: str, error_type: str, message: str) -> None:
        super().__init__(f"{function}: {error_type}: {message}")
        self.error_type = error_type


class LambdaInvoker:
    def __init__(self, client: Any, crawler_function: str, processor_function: str) -> None:
        self._client = client
        self._crawler = crawler_function
        self._processor = processor_function

    async def crawl(self, request: CrawlRequest) -> CrawlResponse:
        # boto3 blocks; a thread per call lets the orchestrator run batches in parallel.
        return await asyncio.to_thread(self.crawl_sync, request)

    def crawl_sync(self, request: CrawlRequest) -> CrawlResponse:
        answer = call(
            self._client.invoke,
            FunctionName=self._crawler,
            InvocationType="RequestResponse",
            Payload=dumps(request).encode(),
        )
        body = answer["Payload"].read()
        if answer.get("FunctionError"):
            raise InvocationFailed(self._crawler, *_error_of(body))
        return loads(CrawlResponse, body)

    def process(self, page: CrawledPage) -> None:
        answer = call(
            self._client.invoke,
            FunctionName=self._processor,
            InvocationType="Event",
            Payload=dumps(page).encode(),
        )
        if answer.get("StatusCode") != 202:
            raise InvocationFailed(self._processor, "NotQueued", str(answer.get("StatusCode")))


def _error_of(body: bytes) -> tuple[str, str]:
    """(errorType, errorMessage) from a failed invocation's payload, whatever its shape."""
    try:
        detail = json.loads(body)
    except ValueError:
        return "FunctionError", body.decode(errors="replace")[:500]
    if not isinstance(detail, dict):
        return "FunctionError", str(detail)[:500]
    return str(detail.get("errorType", "FunctionError")), str(detail.get("errorMessage", ""))
