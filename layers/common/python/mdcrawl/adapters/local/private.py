"""What a crawl with credentials fetched stays that crawl's own.

A site may answer a signed-in reader otherwise than anyone else. The local content cache
is shared by every crawl of the cache folder: a page fetched as ``user:pw@`` would
otherwise be served, fresh or revalidated, to a later crawl of the same URL without
credentials (or with another user's). ``PrivateContentCache`` keeps such a crawl's
entries under keys of their own: the same credentials find them again (a re-crawl of a
private site still sends conditional GETs, a resumed crawl still finds what it fetched),
nobody else does. The key is an HMAC of the credentials under a secret made once per
cache folder (``private.key``, readable by its owner only), so the cache holds nothing a
password could be guessed from. robots.txt and sitemaps such a crawl read are not kept
at all (``runtime/local.py``); the markdown cache is by the body's own hash, which a
crawl only looks up for a body it fetched itself.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import replace
from pathlib import Path

from ...models import CacheEntry
from ...ports import ContentCache

KEY_FILE = "private.key"
_KEY_BYTES = 32


class PrivateContentCache:
    """``cache`` with every URL hash mapped into ``namespace`` (see the module)."""

    def __init__(self, cache: ContentCache, namespace: str) -> None:
        self._cache = cache
        self._namespace = namespace

    def get(self, url_hash: str) -> CacheEntry | None:
        entry = self._cache.get(self._key(url_hash))
        return None if entry is None else replace(entry, url_hash=url_hash)

    def put(self, entry: CacheEntry) -> None:
        self._cache.put(replace(entry, url_hash=self._key(entry.url_hash)))

    def _key(self, url_hash: str) -> str:
        mixed = hashlib.sha256(f"{self._namespace}\0{url_hash}".encode()).hexdigest()
        return mixed[: len(url_hash)]  # the length of any other key: the schema's


def credentials_namespace(root: Path, auth: tuple[str, str]) -> str:
    """The namespace of a crawl signed in as ``auth`` (user, password) in ``root``."""
    user, password = auth
    message = f"{user}\0{password}".encode("utf-8", "surrogatepass")
    return hmac.new(_secret(root), message, hashlib.sha256).hexdigest()


def content_cache_for(
    cache: ContentCache, root: Path, auth: tuple[str, str] | None
) -> ContentCache:
    """The content cache a crawl reads and writes: the shared one, unless it signs in."""
    return cache if auth is None else PrivateContentCache(cache, credentials_namespace(root, auth))


def _secret(root: Path) -> bytes:
    """This cache folder's key, made on first use (crawls racing to make it, in one
    process or several: the first file linked wins, and all read it)."""
    path = root / KEY_FILE
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    # a name of its own for each attempt: two in one process (MCP crawls run in threads)
    # must not write, link or remove each other's
    temp = root / f".tmp-{KEY_FILE}-{os.getpid()}-{secrets.token_hex(8)}"
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(secrets.token_bytes(_KEY_BYTES))
    try:
        os.link(temp, path)  # fails if another crawl made it first: theirs stands
    except FileExistsError:
        pass
    finally:
        temp.unlink()
    return path.read_bytes()
