"""DynamoDbContentCache: URL -> last fetch, shared by every job and user.

Entries carry the TTL attribute so DynamoDB deletes them on its own. They live
``keep_s`` past ``fresh_until``: a stale entry still holds the validators (ETag,
Last-Modified) that turn the next fetch into a cheap conditional GET.

A page's link list is the one unbounded part of an entry (a real API index page has
17,940 links, ~1.2 MB, three times DynamoDB's 400 KB item limit). It is stored
zlib-compressed as one binary attribute (documentation links share long prefixes:
~8x smaller, and a write is billed per KB), and above ``CACHE_ITEM_BUDGET`` compressed
it goes to S3 under ``cache/links/<sha256>`` with only the key in the item.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import replace
from typing import Any

from ...errors import StoreError
from ...models import CacheEntry
from ...names import TTL_ATTRIBUTE, BlobPrefix
from .calls import call
from .dynamo import expires_at, from_item, to_item
from .limits import CACHE_ITEM_BUDGET
from .records import cache_from_attrs, cache_to_attrs

DEFAULT_KEEP_S = 30 * 86400.0
BATCH_GET = 100  # BatchGetItem's limit
LINKS_Z = "links_z"  # zlib("\n".join(links))
LINKS_KEY = "links_key"  # or the S3 key holding that same compressed text


class DynamoDbContentCache:
    def __init__(
        self,
        client: Any,
        table: str,
        keep_s: float = DEFAULT_KEEP_S,
        blobs: Any = None,
        item_budget: int = CACHE_ITEM_BUDGET,
    ) -> None:
        self._client = client
        self._table = table
        self._keep_s = keep_s
        self._blobs = blobs  # for link lists over ``item_budget``
        self._budget = item_budget

    def get(self, url_hash: str) -> CacheEntry | None:
        found = call(
            self._client.get_item, TableName=self._table, Key={"url_hash": {"S": url_hash}}
        )
        return self._entry(found["Item"]) if "Item" in found else None

    def get_many(self, url_hashes: list[str]) -> dict[str, CacheEntry | None]:
        """``get`` of each (a crawl batch's URLs), in BatchGetItem requests of 100."""
        keys = [{"url_hash": {"S": h}} for h in dict.fromkeys(url_hashes)]
        found: dict[str, CacheEntry | None] = dict.fromkeys(url_hashes)
        for item in batch_get_items(self._client, self._table, keys, consistent=False):
            found[item["url_hash"]["S"]] = self._entry(item)
        return found

    def _entry(self, item: dict[str, Any]) -> CacheEntry | None:
        attrs = from_item(item)
        packed, key = attrs.pop(LINKS_Z, None), attrs.pop(LINKS_KEY, None)
        entry = cache_from_attrs(attrs)
        if key is not None:
            packed = self._blobs.get(key) if self._blobs is not None else None
            if packed is None:  # the spilled list expired or was never written: refetch
                return None
        return replace(entry, links=unpack_links(packed)) if packed is not None else entry

    def put(self, entry: CacheEntry) -> None:
        attrs = cache_to_attrs(entry)
        links = attrs.pop("links", ())
        if links:
            packed = pack_links(links)
            if len(packed) <= self._budget or self._blobs is None:
                attrs[LINKS_Z] = packed
            else:
                key = f"{BlobPrefix.CACHE_LINKS}{hashlib.sha256(packed).hexdigest()}"
                self._blobs.put(key, packed, "application/zlib")
                attrs[LINKS_KEY] = key
        attrs[TTL_ATTRIBUTE] = expires_at(max(entry.fresh_until, entry.fetched_at), self._keep_s)
        call(self._client.put_item, TableName=self._table, Item=to_item(attrs))


def batch_get_items(
    client: Any, table: str, keys: list[dict[str, Any]], consistent: bool
) -> list[dict[str, Any]]:
    """The items of ``keys`` that exist (raw DynamoDB items), 100 keys per request,
    unprocessed keys asked again."""
    items: list[dict[str, Any]] = []
    for start in range(0, len(keys), BATCH_GET):
        request: dict[str, Any] = {
            table: {"Keys": keys[start : start + BATCH_GET], "ConsistentRead": consistent}
        }
        while request:
            answer = call(client.batch_get_item, RequestItems=request)
            items.extend(answer.get("Responses", {}).get(table, []))
            request = answer.get("UnprocessedKeys") or {}
    return items


def pack_links(links: tuple[str, ...] | list[str]) -> bytes:
    return zlib.compress("\n".join(links).encode(), 6)


def unpack_links(packed: Any) -> tuple[str, ...]:
    raw = getattr(packed, "value", packed)  # boto3's Binary wraps the bytes
    try:
        text = zlib.decompress(bytes(raw)).decode()
    except zlib.error as exc:
        raise StoreError(f"a cache entry's link list is corrupt: {exc}") from exc
    return tuple(text.split("\n")) if text else ()
