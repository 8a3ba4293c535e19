"""Content-Encoding undone incrementally, with a bound on what every layer may produce.

httpx decodes each network chunk whole, layer after layer: 3.6 KB served as
``Content-Encoding: gzip, gzip`` became gigabytes in memory before the size cap, which
counts decoded chunks, ever saw them. Here each layer inflates at most ``PIECE`` bytes at
a time (zlib's ``max_length``), hands them to the next layer at once, and stops with
``TooLarge`` as soon as any layer's output passes the cap: memory stays at about the cap
whatever the compression ratio, and no byte past the cap is ever inflated.

Encodings: gzip (x-gzip), deflate (zlib-wrapped, or raw as some servers send it),
identity. The request advertises exactly these (``ACCEPT_ENCODING``); anything else is
refused with ``FetchError``.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from .errors import FetchError, TooLarge

ACCEPT_ENCODING = "gzip, deflate"
PIECE = 64 * 1024
_GZIP_WBITS = 16 + zlib.MAX_WBITS


class _Layer:
    """One encoding being undone; ``produced`` counts its output so far."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self.produced = 0
        self._raw_deflate_tried = False
        self._fed = False
        if encoding == "deflate":
            self._inflater = zlib.decompressobj()
        else:
            self._inflater = zlib.decompressobj(_GZIP_WBITS)

    def pieces(self, data: bytes) -> Iterator[bytes]:
        """The inflated bytes of ``data``, PIECE at most at a time."""
        while data and not self._inflater.eof:
            piece = self._decompress(data)
            data = self._inflater.unconsumed_tail
            if piece:
                self.produced += len(piece)
                yield piece

    def _decompress(self, data: bytes) -> bytes:
        first, self._fed = not self._fed, True
        try:
            return self._inflater.decompress(data, PIECE)
        except zlib.error as exc:
            if first and self.encoding == "deflate" and not self._raw_deflate_tried:
                # "deflate" sent without its zlib wrapper (old IIS, some CDNs).
                self._raw_deflate_tried = True
                self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                return self._inflater.decompress(data, PIECE)
            raise FetchError(f"a {self.encoding} body that does not decode: {exc}") from exc


class BoundedInflater:
    """Feed raw body bytes, get decoded bytes; ``TooLarge`` once a layer passes ``limit``."""

    def __init__(self, content_encoding: str, limit: int, url: str) -> None:
        self._limit, self._url = limit, url
        self._layers = [_Layer(e) for e in _decoding_order(content_encoding, url)]

    def feed(self, data: bytes) -> list[bytes]:
        return list(self._through(0, data))

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._layers):
            yield data
            return
        layer = self._layers[index]
        for piece in layer.pieces(data):
            if layer.produced > self._limit:
                raise TooLarge(
                    f"{self._url}: the {layer.encoding} body inflates past the "
                    f"{self._limit} byte cap"
                )
            yield from self._through(index + 1, piece)


def _decoding_order(content_encoding: str, url: str) -> list[str]:
    """The layers to undo, last applied first; identity layers are no layers."""
    names = [n.strip().lower() for n in content_encoding.split(",") if n.strip()]
    layers = []
    for name in reversed(names):
        if name in ("gzip", "x-gzip"):
            layers.append("gzip")
        elif name == "deflate":
            layers.append("deflate")
        elif name != "identity":
            raise FetchError(f"{url}: Content-Encoding {name!r} is not supported")
    return layers
