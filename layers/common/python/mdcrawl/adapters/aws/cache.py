"""DynamoDbContentCache: URL -> last fetch, shared by every job and user.

Entries carry the TTL attribute so DynamoDB deletes them on its own. They live
``keep_s`` past ``fresh_until``: a stale entry still holds the validators (ETag,
Last-Modified) that turn the next fetch into a cheap conditional GET.
"""

from __future__ import annotations

from typing import Any

from ...models import CacheEntry
from ...names import TTL_ATTRIBUTE
from .calls import call
from .dynamo import expires_at, from_item, to_item
from .records import cache_from_attrs, cache_to_attrs

DEFAULT_KEEP_S = 30 * 86400.0


class DynamoDbContentCache:
    def __init__(self, client: Any, table: str, keep_s: float = DEFAULT_KEEP_S) -> None:
        self._client = client
        self._table = table
        self._keep_s = keep_s

    def get(self, url_hash: str) -> CacheEntry | None:
        found = call(
            self._client.get_item, TableName=self._table, Key={"url_hash": {"S": url_hash}}
        )
        return cache_from_attrs(from_item(found["Item"])) if "Item" in found else None

    def put(self, entry: CacheEntry) -> None:
        attrs = cache_to_attrs(entry)
        attrs[TTL_ATTRIBUTE] = expires_at(max(entry.fresh_until, entry.fetched_at), self._keep_s)
        call(self._client.put_item, TableName=self._table, Item=to_item(attrs))
