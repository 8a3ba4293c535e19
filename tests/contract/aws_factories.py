"""The AWS adapters, registered for the contract suites (see conftest.py for the shape).

``dynamodb-moto`` / ``s3-moto``: moto in-process, fresh tables and bucket per test.
``dynamodb-local``: the real DynamoDB engine (DynamoDB Local, started once per test
process), fresh tables per test. It needs Java and npm, and fails loudly without them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from mdcrawl.adapters.aws.packs import PackedBlobs
from mdcrawl.adapters.aws.stores import AwsStores, aws_stores
from mdcrawl.names import Table

from tests.support.aws import BUCKET, moto_clients, shared_dynamodb_local


class FixedClock:
    """TTL stamps only: the contract never reads them, a fixed time keeps runs equal."""

    def now(self) -> float:
        return 1_000_000.0


@contextmanager
def moto_adapter(tmp_path: Path, attribute: str) -> Iterator[Any]:
    with moto_clients() as aws:
        stores = aws_stores(aws.session, aws.names, aws.bucket, clock=FixedClock())
        yield getattr(stores, attribute)


@contextmanager
def dynamodb_local_adapter(tmp_path: Path, attribute: str) -> Iterator[Any]:
    server = shared_dynamodb_local()
    clients = {"dynamodb": server.client(), "s3": None}
    stores: AwsStores = aws_stores(clients, server.fresh_tables(), BUCKET, clock=FixedClock())
    yield getattr(stores, attribute)


@contextmanager
def packed_blobs_adapter(tmp_path: Path) -> Iterator[Any]:
    """The bucket as the crawler, processor and finalizer see it: cache keys in packs."""
    with moto_clients() as aws:
        stores = aws_stores(aws.session, aws.names, aws.bucket, clock=FixedClock())
        yield PackedBlobs(
            stores.blobs,
            aws.dynamodb,
            aws.names[Table.CACHE],
            keep_s=30 * 86400.0,
            refresh_s=28 * 86400.0,
        )


def _both(attribute: str) -> dict[str, Callable[[Path], Any]]:
    return {
        "dynamodb-moto": partial(moto_adapter, attribute=attribute),
        "dynamodb-local": partial(dynamodb_local_adapter, attribute=attribute),
    }


FACTORIES = {
    "jobstore": _both("jobs"),
    "frontier": _both("frontier"),
    "cache": _both("cache"),
    "pages": _both("pages"),
    "events": _both("events"),
    "connections": _both("connections"),
    "blobs": {
        "s3-moto": partial(moto_adapter, attribute="blobs"),
        "s3-moto-packed": packed_blobs_adapter,
    },
}
