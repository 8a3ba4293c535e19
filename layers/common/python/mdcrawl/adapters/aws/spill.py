"""A crawler's answer over Lambda's 6 MB synchronous response limit goes to S3 and the
answer becomes a pointer to it, which ``LambdaInvoker`` follows (``invoker.SPILLED``)."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from ...names import CRAWL_SPILL, job_key
from ...ports import BlobStore, CrawlResponse
from .invoker import SPILLED
from .limits import CRAWL_RESPONSE_BUDGET, json_size
from .payloads import to_data

log = logging.getLogger(__name__)


def answer_of(response: CrawlResponse, blobs: BlobStore) -> dict[str, Any]:
    """The crawler's return value: the response, or a pointer to it in S3."""
    data: dict[str, Any] = to_data(response)
    size = json_size(data)
    if size <= CRAWL_RESPONSE_BUDGET:
        return data
    body = json.dumps(data, separators=(",", ":")).encode()
    name = f"{CRAWL_SPILL}{hashlib.sha256(body).hexdigest()}.json"
    key = job_key(response.job_id, name)
    blobs.put(key, body, "application/json")
    log.warning("crawl answer of %d bytes spilled to %s", size, key)
    return {SPILLED: key}
