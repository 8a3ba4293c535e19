"""robots.txt in the shared content cache: one fetch per site per ``fresh_s``, not one
per crawler invocation (a batch of 4 URLs), whichever job asks.

An item ``robots#<origin>`` in the cache table (no URL hash can collide with it) holds
the text (zlib-packed: a long robots.txt is mostly repeated paths) and when it was
fetched; DynamoDB's TTL removes it a day after it goes stale. A fetch that failed is
stored as "" (allow all, as fetch.py decides), so a broken robots.txt is not asked for
on every batch either. Within one invocation the answer is kept in memory.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from typing import Any

from ...names import TTL_ATTRIBUTE
from .calls import call

ROBOTS_PREFIX = "robots#"
MAX_PACKED = 300_000  # bytes: DynamoDB items stop at 400 KB
FRESH_S = 86400.0  # as long as the big crawlers keep a robots.txt (RFC 9309 says 24 h)


class DynamoDbRobotsCache:
    def __init__(
        self,
        client: Any,
        table: str,
        fresh_s: float = FRESH_S,
        now: Callable[[], float] = time.time,
    ) -> None:
        self._client, self._table, self._fresh_s, self._now = client, table, fresh_s, now
        self._known: dict[str, str] = {}

    def get(self, origin: str) -> str | None:
        if origin in self._known:
            return self._known[origin]
        found = call(
            self._client.get_item, TableName=self._table, Key=_key(origin)
        ).get("Item")
        if found is None or self._now() - float(found["fetched_at"]["N"]) >= self._fresh_s:
            return None
        text = zlib.decompress(bytes(found["text_z"]["B"])).decode()
        self._known[origin] = text
        return text

    def put(self, origin: str, text: str) -> None:
        now = self._now()
        self._known[origin] = text
        packed = zlib.compress(text.encode(), 6)
        if len(packed) > MAX_PACKED:
            return  # kept for this invocation only: the item would not fit
        call(
            self._client.put_item,
            TableName=self._table,
            Item={
                **_key(origin),
                "text_z": {"B": packed},
                "fetched_at": {"N": repr(now)},
                TTL_ATTRIBUTE: {"N": str(int(now + 2 * self._fresh_s))},
            },
        )


def _key(origin: str) -> dict[str, Any]:
    return {"url_hash": {"S": f"{ROBOTS_PREFIX}{origin}"}}
