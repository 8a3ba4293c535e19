"""The webhook signing secret, from Secrets Manager, read once per ``cache_s`` per warm
function (a rotated secret is in use within ``cache_s``; receivers should accept the old
and the new one for that long)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ...errors import StoreError
from .calls import call


class SecretValue:
    def __init__(
        self,
        client: Any,
        secret_id: str,
        cache_s: float = 300.0,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client, self._id, self._cache_s, self._now = client, secret_id, cache_s, now
        self._value: tuple[float, bytes] | None = None

    def __call__(self) -> bytes:
        now = self._now()
        if self._value is None or now - self._value[0] >= self._cache_s:
            answer = call(self._client.get_secret_value, SecretId=self._id)
            text = answer.get("SecretString")
            if not text:
                raise StoreError(f"secret {self._id} has no string value")
            self._value = (now, text.encode())
        return self._value[1]
