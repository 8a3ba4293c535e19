"""LambdaInvoker: the orchestrator reaches the crawler (synchronously) and the
processor (asynchronously) through Lambda invoke. Payloads carry ids, urls and S3
keys, never page bodies (an invoke payload is capped at 6 MB; an Event payload at 1 MB,
256 KB before Oct 2025: ``limits.py``). A crawler answer that would not fit comes back
as a pointer to S3.

Pages handed over inside ``collecting()`` (the orchestrator applies a crawl batch's
outcomes in one such block) go to the processor together, one Event invoke per
``MAX_PAGES_PER_EVENT`` pages (``{"pages": [...]}``): an invocation, its start-up reads
and its counter write are paid per batch, not per page. Outside it (re-handing a page
that may be the one killing the processor) a page goes alone."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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
PAGES = "pages"  # a processor event of several pages: {"pages": [<CrawledPage>, ...]}
# Pages per processor invocation: a crawl batch is concurrency / 2 URLs (4 at the
# default 8); 8 pages of the 10 MB fetch cap still convert inside the processor's timeout.
MAX_PAGES_PER_EVENT = 8


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
        self._collected = threading.local()  # per thread: the pages of its open block

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
        pending = getattr(self._collected, "pages", None)
        if pending is not None:
            pending.append(page)
        else:
            self._send(dumps(page).encode())

    @contextmanager
    def collecting(self) -> Iterator[None]:
        """Pages handed over in the block go to the processor when it ends, together
        (also when it ends with an exception: those pages' URLs are finished already)."""
        if getattr(self._collected, "pages", None) is not None:
            yield  # nested: the outer block sends them
            return
        self._collected.pages = []
        try:
            yield
        finally:
            pages, self._collected.pages = self._collected.pages, None
            self.process_many(pages)

    def process_many(self, pages: Sequence[CrawledPage]) -> None:
        """``pages`` to the processor, as few Event invokes as the limits allow."""
        for payload in batch_payloads(pages):
            self._send(payload)

    def _send(self, payload: bytes) -> None:
        check_size("processor event", len(payload), LAMBDA_ASYNC_PAYLOAD)
        answer = call(
            self._event_client.invoke,
            FunctionName=self._processor,
            InvocationType="Event",
            Payload=payload,
        )
        if answer.get("StatusCode") != 202:
            raise InvocationFailed(self._processor, "NotQueued", str(answer.get("StatusCode")))


def batch_payloads(pages: Sequence[CrawledPage]) -> Iterator[bytes]:
    """Event payloads of at most ``MAX_PAGES_PER_EVENT`` pages and 256 KB each, the pages
    in the order given; a single page is sent as itself."""
    chunk: list[str] = []
    size = 0
    for page in pages:
        text = dumps(page)
        bytes_ = len(text.encode()) + 1
        if chunk and (len(chunk) == MAX_PAGES_PER_EVENT or size + bytes_ > _BUDGET):
            yield _payload(chunk)
            chunk, size = [], 0
        chunk.append(text)
        size += bytes_
    if chunk:
        yield _payload(chunk)


_BUDGET = LAMBDA_ASYNC_PAYLOAD - 1024  # room for the envelope


def _payload(texts: list[str]) -> bytes:
    if len(texts) == 1:
        return texts[0].encode()
    return ('{"' + PAGES + '":[' + ",".join(texts) + "]}").encode()


def _error_of(body: bytes) -> tuple[str, str]:
    """(errorType, errorMessage) from a failed invocation's payload, whatever its shape."""
    try:
        detail = json.loads(body)
    except ValueError:
        return "FunctionError", body.decode(errors="replace")[:500]
    if not isinstance(detail, dict):
        return "FunctionError", str(detail)[:500]
    return str(detail.get("errorType", "FunctionError")), str(detail.get("errorMessage", ""))
