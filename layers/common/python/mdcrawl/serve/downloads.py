"""Result downloads served by the server itself: the local stand-in for pre-signed S3 URLs.

``SignedBlobStore`` is the file blob store whose ``link`` answers a server path,
``/files/<key>?name=..&sig=..``, where ``sig`` is an itsdangerous token (an HMAC over
the key, the file name and the expiry, with a secret only this server knows). The
download route checks it, so a link works without the API key (a browser following the
result redirect cannot send headers), but nobody can forge one for another key, and an
old one stops working, as on AWS.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

from itsdangerous import BadSignature, URLSafeSerializer

from ..adapters.local.blobs import FileBlobStore

FILES_PREFIX = "/files/"
SALT = "mdcrawl-serve-download"


@dataclass(frozen=True)
class LinkSigner:
    secret: bytes
    clock: Callable[[], float] = time.time

    def sign(self, key: str, expires_s: int, filename: str) -> str:
        expires = int(self.clock()) + expires_s
        token = self._serializer().dumps([key, filename, expires])
        return f"{FILES_PREFIX}{quote(key)}?{urlencode({'name': filename, 'sig': token})}"

    def verify(self, key: str, filename: str, sig: str) -> bool:
        """True for a link this server signed, for this key and name, not expired yet."""
        try:
            signed_key, signed_name, expires = self._serializer().loads(sig)
        except (BadSignature, ValueError, TypeError):
            return False
        fresh = isinstance(expires, int) and expires >= self.clock()
        return fresh and (signed_key, signed_name) == (key, filename)

    def _serializer(self) -> URLSafeSerializer:
        return URLSafeSerializer(self.secret, salt=SALT)


class SignedBlobStore(FileBlobStore):
    """Files under the cache folder, with links to this server's download route."""

    def __init__(self, root: Path, signer: LinkSigner) -> None:
        super().__init__(root)
        self.signer = signer

    def link(self, key: str, expires_s: int = 900, filename: str | None = None) -> str:
        return self.signer.sign(key, expires_s, filename or key.rsplit("/", 1)[-1])
