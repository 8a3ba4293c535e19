"""Result downloads served by the server itself: the local stand-in for pre-signed S3 URLs.

``SignedBlobStore`` is the file blob store whose ``link`` answers a server path,
``/files/<key>?expires=..&name=..&sig=..``, signed with a secret only this server knows.
The download route checks the signature and the expiry, so a link works without the
API key (a browser following the result redirect cannot send headers), but nobody can
forge one for another key, and an old one stops working, as on AWS.
"""

from __future__ import annotations

import hashlib
import hmac
import mimetypes
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

from ..adapters.local.blobs import FileBlobStore

FILES_PREFIX = "/files/"


@dataclass(frozen=True)
class LinkSigner:
    secret: bytes
    clock: Callable[[], float] = time.time

    def sign(self, key: str, expires_s: int, filename: str) -> str:
        expires = int(self.clock()) + expires_s
        query = urlencode({"expires": expires, "name": filename})
        return f"{FILES_PREFIX}{quote(key)}?{query}&sig={self._mac(key, expires, filename)}"

    def verify(self, key: str, expires: str, filename: str, sig: str) -> bool:
        """True for a link this server signed that has not expired yet."""
        if not expires.isdigit() or int(expires) < self.clock():
            return False
        return hmac.compare_digest(sig, self._mac(key, int(expires), filename))

    def _mac(self, key: str, expires: int, filename: str) -> str:
        text = f"{key}\n{expires}\n{filename}".encode()
        return hmac.new(self.secret, text, hashlib.sha256).hexdigest()


class SignedBlobStore(FileBlobStore):
    """Files under the cache folder, with links to this server's download route."""

    def __init__(self, root: Path, signer: LinkSigner) -> None:
        super().__init__(root)
        self.signer = signer

    def link(self, key: str, expires_s: int = 900, filename: str | None = None) -> str:
        return self.signer.sign(key, expires_s, filename or key.rsplit("/", 1)[-1])


def content_type(filename: str) -> str:
    if filename.endswith(".md"):
        return "text/markdown; charset=utf-8"
    if filename.endswith((".txt", ".jsonl")):
        return "text/plain; charset=utf-8"
    return mimetypes.guess_type(filename)[0] or "application/octet-stream"
