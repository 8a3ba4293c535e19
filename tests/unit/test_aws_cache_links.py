"""A cache entry's link list fits DynamoDB's 400 KB item: compressed inline, in S3
when even compressed it is large; read back whole either way."""

from __future__ import annotations

import pytest
from mdcrawl.adapters.aws.blobs import S3BlobStore
from mdcrawl.adapters.aws.cache import LINKS_KEY, LINKS_Z, DynamoDbContentCache
from mdcrawl.adapters.aws.limits import DYNAMODB_ITEM
from mdcrawl.models import CacheEntry
from mdcrawl.names import Table

from tests.support.aws import moto_clients


def entry(links: tuple[str, ...]) -> CacheEntry:
    return CacheEntry("h1", "https://d.example/a", "https://d.example/a", 200, "text/html",
                      1.0, 2.0, "c" * 64, links=links)


@pytest.fixture
def aws():
    with moto_clients() as aws:
        yield aws


def stored_item(aws) -> dict:
    return aws.dynamodb.get_item(TableName=aws.names[Table.CACHE], Key={"url_hash": {"S": "h1"}})[
        "Item"]


def item_size(item: dict) -> int:
    return sum(len(k) + len(str(v)) for k, v in item.items())


@pytest.mark.parametrize("count", [0, 40, 17_940])
def test_links_round_trip_and_the_item_stays_small(aws, count: int) -> None:
    # Unique, unpredictable path segments: compression cannot hide the size.
    links = tuple(f"https://d.example/api/{i * 7919 % 100003:06x}/{i}" for i in range(count))
    cache = DynamoDbContentCache(
        aws.dynamodb, aws.names[Table.CACHE], blobs=S3BlobStore(aws.s3, aws.bucket),
        item_budget=16 * 1024,
    )
    cache.put(entry(links))
    assert cache.get("h1") == entry(links)
    item = stored_item(aws)
    assert "links" not in item
    assert item_size(item) < DYNAMODB_ITEM // 4
    if count > 1000:
        assert LINKS_KEY in item and LINKS_Z not in item
    elif count:
        assert LINKS_Z in item


def test_a_spilled_list_that_expired_is_a_cache_miss(aws) -> None:
    links = tuple(f"https://d.example/{i:x}/{i * 31:x}" for i in range(20_000))
    cache = DynamoDbContentCache(
        aws.dynamodb, aws.names[Table.CACHE], blobs=S3BlobStore(aws.s3, aws.bucket),
        item_budget=1024,
    )
    cache.put(entry(links))
    aws.s3.delete_object(Bucket=aws.bucket, Key=stored_item(aws)[LINKS_KEY]["S"])
    assert cache.get("h1") is None
