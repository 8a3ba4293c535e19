"""LambdaInvoker: the orchestrator reaches the crawler (synchronously) and the
processor (asynchronously) through Lambda invoke. Payloads carry ids, urls and S3
keys, never page bodies (an invoke payload is capped at 6 MB; an Event payload at 1 MB,
256 KB before Oct 2025: ``limits.py``). A crawler answer that would not fit comes back
as a pointer to S3."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ...errors import StoreError
from ...models import CrawledPage
from ...ports import CrawlRequest, CrawlResponse
from .calls import call
from .limits import LAMBDA_ASYNC_PAYLOAD, check_size
from .payloads import dumps, loads


class InvocationFailed(StoreError):
    """The function ran and failed (``FunctionError``), or Lambda refused the call."""

    def __init__(self, function: str, error_type: str, message: str) -> None:
        super().__init__(f"{function}: {error_type}: {message}")
        self.error_type = error_type


SPILLED = "spilled"  # a crawler answer over Lambda's 6 MB: {"spilled": "<S3 key>"}


class LambdaInvoker:
    def __init__(
        self,
        client: Any,
        crawler_function: str,
        processor_function: str,
        blobs: Any = None,
        event_client: Any = None,
    ) -> None:
        self._client = client
        self._crawler = crawler_function
        self._processor = processor_function
        self._blobs = blobs  # where spilled crawler answers are read from
        # Event invokes only queue the event and processing is idempotent: their client
        # may retry throttling and 5xx (the crawl client must not: a second crawl).
        self._event_client = event_client if event_client is not None else client

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
        return loads(CrawlResponse, self._unspilled(body))

    def _unspilled(self, body: bytes) -> bytes:
        if not body.startswith(b'{"' + SPILLED.encode()):
            return body
        key = json.loads(body)[SPILLED]
        stored = self._blobs.get(key) if self._blobs is not None else None
        if stored is None:
            raise InvocationFailed(self._crawler, "SpillMissing", f"no answer under {key}")
        return bytes(stored)

    def process(self, page: CrawledPage) -> None:
        payload = dumps(page).encode()
        check_size("processor event", len(payload), LAMBDA_ASYNC_PAYLOAD)
        answer = call(
            self._event_client.invoke,
            FunctionName=self._processor,
            InvocationType="Event",
            Payload=payload,
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
