"""AWS's hard limits the pipeline designs against, in one place (the scale harness and
the tests enforce the same numbers).

Sources (AWS documentation): Lambda quotas ("Invocation payload: 6 MB each for request
and response, synchronous; 1 MB asynchronous" — 256 KB before Oct 2025 and still for
InvokeAsync: we keep to 256 KB), DynamoDB "item size 400 KB, attribute names and values
included", API Gateway WebSocket "frame size 32 KB, message payload 128 KB", API
Gateway REST "integration timeout 29 s".
"""

from __future__ import annotations

import json
from typing import Any

KB = 1024
MB = 1024 * KB

LAMBDA_SYNC_PAYLOAD = 6 * MB
LAMBDA_ASYNC_PAYLOAD = 256 * KB
DYNAMODB_ITEM = 400 * KB
WEBSOCKET_MESSAGE = 128 * KB
REST_INTEGRATION_TIMEOUT_S = 29.0

# What we allow ourselves, with room for Lambda's own envelope and attribute names.
CRAWL_RESPONSE_BUDGET = LAMBDA_SYNC_PAYLOAD - 256 * KB
CACHE_ITEM_BUDGET = 64 * KB  # an entry's links spill to S3 above this (compressed)


def json_size(data: Any) -> int:
    """Bytes of ``data`` as Lambda receives it (compact JSON, UTF-8)."""
    return len(json.dumps(data, separators=(",", ":")).encode())


class PayloadTooLarge(ValueError):
    """A payload or item over an AWS limit: a bug here, a hard failure on AWS."""

    def __init__(self, what: str, size: int, limit: int) -> None:
        super().__init__(f"{what} is {size} bytes, over AWS's limit of {limit}")
        self.size, self.limit = size, limit


def check_size(what: str, size: int, limit: int) -> None:
    if size > limit:
        raise PayloadTooLarge(what, size, limit)
