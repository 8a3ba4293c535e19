"""ApiKeyChecker: a WebSocket connection's API key, checked against the REST usage plan."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ...errors import StoreError


class ApiKeyChecker:
    """WebSocket $connect: the caller's ``?api_key=`` must be an enabled key of the REST
    usage plan; its key id becomes the connection's owner (as ``apiKeyId`` on REST).

    Answers are kept ``cache_s`` per warm function: the API Gateway control plane is
    rate-limited (a few requests per second per account) and a reconnect storm would
    hit it once per connection. A disabled key stops connecting within ``cache_s``."""

    def __init__(
        self,
        client: Any,
        usage_plan_id: str,
        cache_s: float = 60.0,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client, self._plan = client, usage_plan_id
        self._cache_s, self._now = cache_s, now
        self._known: dict[str, tuple[float, str | None]] = {}

    def owner_of(self, api_key: str | None) -> str | None:
        if not api_key or not self._plan:
            return None
        now = self._now()
        known = self._known.get(api_key)
        if known is not None and now - known[0] < self._cache_s:
            return known[1]
        owner = self._look_up(api_key)
        if len(self._known) > 10_000:  # keys of a plan are few; guessed ones are not
            self._known.clear()
        self._known[api_key] = (now, owner)
        return owner

    def _look_up(self, api_key: str) -> str | None:
        try:
            pages = self._client.get_paginator("get_usage_plan_keys")
            for page in pages.paginate(usagePlanId=self._plan):
                for key in page.get("items", []):
                    if key.get("value") == api_key:
                        return self._enabled(str(key["id"]))
        except self._client.exceptions.ClientError as exc:
            raise StoreError(f"get_usage_plan_keys: {exc}") from exc
        return None

    def _enabled(self, key_id: str) -> str | None:
        record = self._client.get_api_key(apiKey=key_id)
        return key_id if record.get("enabled", False) else None
