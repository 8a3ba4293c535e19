"""A page's chunks made once, where the page is converted, and read back wherever needed.

``chunks.jsonl`` (``agent_outputs.py``) and the docs library (``library/store.py``) hold
the same chunks of the same pages: what ``chunk_page`` makes of a page's markdown as
``llms-full.txt`` holds it (``agent_outputs.page_markdown``), its URL and its title.
Locally a pool worker chunks each page right after recording it (``prepare``) and keeps
the ``chunks.jsonl`` lines in the blob store under a digest of everything they are made
of: URL, title, markdown and the chunking code. Finalize and the library then read them
back (``lines``, ``chunks``); a page the workers did not chunk (converted at finalize, or
by an older mdcrawl) is chunked on the spot and kept for next time. On AWS finalize gets
no cache and chunks as it writes (an S3 object per page would cost more than it saves).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
from pathlib import Path

from ...chunks import Chunk, chunks_from_lines, page_chunk_lines
from ...ports import BlobStore

CHUNKS_PREFIX = "cache/chunks/"
# The modules whose code decides a page's chunks: a change to one of them (an upgrade, a
# checkout) gives every page another key, so no chunk made by other code is read back.
CHUNKING_MODULES = ("mdcrawl.chunks", "mdcrawl.rewrite", "mdcrawl.tokens")


class ChunkCache:
    """Chunks by (URL, title, page markdown), kept as ``chunks.jsonl`` lines in ``blobs``."""

    def __init__(self, blobs: BlobStore) -> None:
        self._blobs = blobs

    def prepare(self, url: str, title: str, markdown: str) -> None:
        """Chunk the page now unless its chunks are kept already."""
        key = chunk_key(url, title, markdown)
        if not self._blobs.exists(key):
            self._blobs.put(key, _lines(url, title, markdown), "application/x-ndjson")

    def lines(self, url: str, title: str, markdown: str | bytes) -> bytes:
        """The page's ``chunks.jsonl`` lines: kept ones, else made (and kept) now.
        ``markdown`` may be given as its UTF-8 bytes."""
        key = chunk_key(url, title, markdown)
        data = self._blobs.get(key)
        if data is None:
            text = markdown.decode("utf-8") if isinstance(markdown, bytes) else markdown
            data = _lines(url, title, text)
            self._blobs.put(key, data, "application/x-ndjson")
        return data

    def chunks(self, url: str, title: str, markdown: str) -> list[Chunk]:
        return chunks_from_lines(self.lines(url, title, markdown))


def chunk_key(url: str, title: str, markdown: str | bytes) -> str:
    """The key of the chunks of a page; its ``markdown`` may be given as UTF-8 bytes
    (what the string's encoding gives, which holds no lone surrogate)."""
    digest = _keyed().copy()
    for part in (url, title):
        digest.update(b"\0" + part.encode("utf-8", "surrogatepass"))
    data = markdown if isinstance(markdown, bytes) else markdown.encode("utf-8", "surrogatepass")
    digest.update(b"\0" + data)
    return f"{CHUNKS_PREFIX}{digest.hexdigest()}.jsonl"


def _lines(url: str, title: str, markdown: str) -> bytes:
    return page_chunk_lines(markdown, url, title)  # chunk_lines(chunk_page(...)), in one pass


@functools.cache
def _keyed() -> hashlib._Hash:
    """The key's digest once it has read the chunking code's (copied for each page)."""
    return hashlib.sha256(chunking_digest().encode())


@functools.cache
def chunking_digest() -> str:
    """A digest of the chunking modules' source (read once per process)."""
    digest = hashlib.sha256()
    for name in CHUNKING_MODULES:
        digest.update(Path(importlib.import_module(name).__file__ or "").read_bytes())
    return digest.hexdigest()
