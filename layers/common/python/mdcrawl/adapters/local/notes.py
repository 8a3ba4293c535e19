"""What a crawl learnt of a site besides its pages, kept in the local cache folder for a
day: robots.txt (``robots.py``) and the sitemap's seed URLs (``sitemaps.py``).

A re-crawl answered from the content cache otherwise sent these requests alone, and
built an HTTP client for them. A note ``<prefix><sha256 of its name>.json`` in the blob
store holds the name, the value and when it was fetched. A damaged note, a note naming
something else, a stale one or one dated in the future (a clock set back) is not
trusted: the fetcher asks again and writes it over.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from .blobs import FileBlobStore

FRESH_S = 86400.0  # as long as the big crawlers keep a robots.txt (RFC 9309 says 24 h)


class FreshNotes:
    """JSON values by name under one blob prefix, each trusted for ``fresh_s``."""

    def __init__(
        self,
        blobs: FileBlobStore,
        prefix: str,
        now: Callable[[], float],
        fresh_s: float = FRESH_S,
    ) -> None:
        self._blobs, self._prefix, self._now, self._fresh_s = blobs, prefix, now, fresh_s

    def get(self, name: str) -> Any | None:
        """The value noted for ``name`` while fresh; None when unknown, stale or damaged."""
        data = self._blobs.get(note_key(self._prefix, name))
        if data is None:
            return None
        try:
            doc = json.loads(data)
            fetched_at, value = float(doc["fetched_at"]), doc["value"]
        except (ValueError, KeyError, TypeError):
            return None
        if doc.get("name") != name or not 0 <= self._now() - fetched_at < self._fresh_s:
            return None
        return value

    def put(self, name: str, value: Any) -> None:
        doc = {"name": name, "fetched_at": self._now(), "value": value}
        data = json.dumps(doc).encode()
        self._blobs.put(note_key(self._prefix, name), data, "application/json")


def note_key(prefix: str, name: str) -> str:
    return f"{prefix}{hashlib.sha256(name.encode()).hexdigest()}.json"


def fresh_for(options_max_age_s: float) -> float:
    """How long a crawl trusts a note: a day, or less when the crawl's ``--max-age`` is
    shorter (``--max-age 0`` asks for everything again, robots.txt and sitemaps too)."""
    return min(FRESH_S, options_max_age_s)
