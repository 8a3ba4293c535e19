"""Each page is chunked once, in the pool worker that recorded it: finalize's chunks.jsonl
and the docs library read those chunks back; a re-crawl of an unchanged site indexes
nothing again in the library."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mdcrawl import agent_outputs
from mdcrawl.adapters.local import chunks as local_chunks
from mdcrawl.chunks import chunk_lines, chunk_page
from mdcrawl.library import Library, store

from tests.support.demo import crawl, read_manifest
from tests.support.server import serve_directory
from tests.support.sites import require_site


def test_pages_are_chunked_once_in_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunked_here: list[str] = []  # pages chunked in this process (the pool's are apart)

    def counting(markdown: str, url: str, title: str) -> object:
        chunked_here.append(url)
        return chunk_page(markdown, url, title)

    def counting_lines(markdown: str, url: str, title: str) -> bytes:
        chunked_here.append(url)
        return chunk_lines(chunk_page(markdown, url, title))

    for module in (agent_outputs, store):
        monkeypatch.setattr(module, "chunk_page", counting)
    monkeypatch.setattr(local_chunks, "page_chunk_lines", counting_lines)
    site = require_site("requests")
    cache, out = tmp_path / "cache", tmp_path / "out"
    with serve_directory(site.root) as server:
        assert crawl(server.url(site.start), cache, out) == 0
        ok = [m for m in read_manifest(out) if m["status"] == "ok"]
        kept = list((cache / "blobs" / local_chunks.CHUNKS_PREFIX).glob("*.jsonl"))
        assert ok and len(kept) == len(ok) and chunked_here == []

        library = Library(cache)
        (snapshot,) = library.snapshots()
        pages = library.pages(snapshot)
        expected = b"".join(chunk_lines(chunk_page(p.markdown, p.url, p.title)) for p in pages)
        assert (out / "chunks.jsonl").read_bytes() == expected
        indexed = _indexed(library)
        assert len(indexed) == expected.count(b"\n")

        assert crawl(server.url(site.start), cache, out) == 0  # unchanged: same command
    assert chunked_here == [] and _indexed(library) == indexed
    assert len(library.snapshots()) == 1 and library.snapshots()[0].id != snapshot.id


def _indexed(library: Library) -> list[tuple[int, str]]:
    with sqlite3.connect(library.path) as db:
        return db.execute("SELECT rowid, body FROM chunks ORDER BY rowid").fetchall()
