"""The AWS composition of every storage port: DynamoDB tables plus one S3 bucket.

Clients come from the caller (a boto3 Session, or ready clients in a mapping such as
``{"dynamodb": ..., "s3": ...}``): nothing here reads the environment or picks an
endpoint, so the same code serves Lambda, moto and DynamoDB Local.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...names import BlobPrefix, Table
from ...ports import Clock
from .blobs import S3BlobStore
from .cache import DEFAULT_KEEP_S, DynamoDbContentCache
from .connections import DynamoDbConnectionStore
from .events import DynamoDbEventLog
from .frontier import DynamoDbFrontier
from .jobs import DynamoDbJobStore
from .pages import DynamoDbPageStore

DEFAULT_RETENTION_S = 30 * 86400.0  # jobs, their queue, pages and events expire (TTL)


class SystemClock:
    def now(self) -> float:
        return time.time()


@dataclass
class AwsStores:
    jobs: DynamoDbJobStore
    frontier: DynamoDbFrontier
    cache: DynamoDbContentCache
    pages: DynamoDbPageStore
    events: DynamoDbEventLog
    connections: DynamoDbConnectionStore
    blobs: S3BlobStore
    clock: Clock


def aws_stores(
    session_or_clients: Any,
    table_names: Mapping[Table, str],
    bucket: str,
    *,
    clock: Clock | None = None,
    retention_s: float | None = DEFAULT_RETENTION_S,
    cache_keep_s: float = DEFAULT_KEEP_S,
) -> AwsStores:
    """Every storage adapter over the given tables and bucket. ``retention_s`` sets the
    TTL of job data (None: never expires), ``cache_keep_s`` how long a cache entry
    outlives its freshness; ``clock`` defaults to the system clock."""
    dynamodb = _client(session_or_clients, "dynamodb")
    s3 = _client(session_or_clients, "s3")
    clock = clock if clock is not None else SystemClock()
    names = dict(table_names)
    blobs = S3BlobStore(
        s3, bucket, refresh=((BlobPrefix.CACHE_MARKDOWN.value, refresh_after(cache_keep_s)),)
    )
    return AwsStores(
        jobs=DynamoDbJobStore(dynamodb, names[Table.JOBS], clock, retention_s),
        frontier=DynamoDbFrontier(dynamodb, names[Table.FRONTIER], clock, retention_s),
        cache=DynamoDbContentCache(dynamodb, names[Table.CACHE], keep_s=cache_keep_s, blobs=blobs),
        pages=DynamoDbPageStore(dynamodb, names[Table.PAGES], clock, retention_s),
        events=DynamoDbEventLog(dynamodb, names[Table.EVENTS], retention_s),
        connections=DynamoDbConnectionStore(dynamodb, names[Table.CONNECTIONS], clock),
        blobs=blobs,
        clock=clock,
    )


def refresh_after(keep_s: float) -> float:
    """How old a markdown cache document may be when a job reads it before it is
    rewritten: S3 expires it ``keep_s`` after its last write, and the job must still
    find it at finalize (hours later at most): two days of margin, or half its life."""
    return max(keep_s - 2 * 86400.0, keep_s / 2)


def _client(session_or_clients: Any, service: str) -> Any:
    if isinstance(session_or_clients, Mapping):
        return session_or_clients[service]
    return session_or_clients.client(service)
