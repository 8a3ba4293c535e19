"""A page's stored markdown: the job's own copy, or the markdown cache's document."""

from __future__ import annotations

import json
import random
from dataclasses import asdict
from pathlib import Path

import pytest
from mdcrawl import stored
from mdcrawl.adapters.local import FileBlobStore
from mdcrawl.models import ConvertedPage
from mdcrawl.pipeline import process
from mdcrawl.stored import read_anchors, read_markdown


def test_both_forms_read_the_same(tmp_path: Path) -> None:
    blobs = FileBlobStore(tmp_path)
    anchors = {"intro": ["Intro", 0]}
    blobs.put("jobs/j/pages/h.md", "# Tête\n".encode())
    blobs.put("jobs/j/pages/h.anchors.json", json.dumps(anchors).encode())
    doc = {"title": "Tête", "markdown": "# Tête\n", "words": 1, "anchors": anchors}
    blobs.put("cache/markdown/v1/c-b.json", json.dumps(doc).encode())
    for key in ("jobs/j/pages/h.md", "cache/markdown/v1/c-b.json"):
        assert read_markdown(blobs, key) == "# Tête\n"
        assert read_anchors(blobs, key) == anchors
    assert read_markdown(blobs, "cache/markdown/v1/gone.json") == ""
    assert read_anchors(blobs, "cache/markdown/v1/gone.json") == {}
    assert read_anchors(blobs, "jobs/j/pages/none.md") == {}


def _json_markdown(data: bytes) -> str:
    """What reading the whole document gives (the way before ``_document_markdown``)."""
    doc = json.loads(data)
    return str(doc.get("markdown") or "") if isinstance(doc, dict) else ""


def _pages(count: int) -> list[ConvertedPage]:
    """Pages whose strings hold what JSON escapes, astral characters, and the very text
    the reader looks for (a title holding ``", "markdown": "``)."""
    rng = random.Random(13)
    alphabet = ['"', "\\", "\n", "\t", "\x00", "\u2028", "é", "🔬", "a", " ", "#", ":", ","]
    tricky = ['", "markdown": "', '{"title": "', "\\u0041", "\\"]

    def text() -> str:
        pieces = [rng.choice(alphabet) for _ in range(rng.randrange(0, 40))]
        pieces.insert(rng.randrange(0, len(pieces) + 1), rng.choice(tricky))
        return "".join(pieces)

    return [
        ConvertedPage(
            title=text(),
            markdown=text(),
            words=rng.randrange(100),
            nav=(text(),),
            anchors={text(): (text(), rng.randrange(3))},
        )
        for _ in range(count)
    ]


def test_a_cache_document_s_markdown_is_what_json_gives(tmp_path: Path) -> None:
    """Every shape a document can have (written now, by the standard encoder with ASCII
    escapes, fields in another order, no markdown, not an object) reads as decoding it
    whole reads it."""
    blobs = FileBlobStore(tmp_path)
    documents = []
    for page in _pages(80):
        fields = asdict(page)
        documents += [
            process._to_json(page),
            json.dumps(fields).encode(),  # ensure_ascii: \\u escapes
            json.dumps(dict(reversed(fields.items())), ensure_ascii=False).encode(),
            json.dumps({"title": page.title, "words": 1, "markdown": page.markdown}).encode(),
            json.dumps({**fields, "markdown": None}).encode(),
        ]
    documents += [b'{"title": "t"}', b'["not", "an object"]', b'{"title": "t", "markdown": 1}']
    for n, data in enumerate(documents):
        key = f"cache/markdown/8/c{n}-b.json"
        blobs.put(key, data)
        assert read_markdown(blobs, key) == _json_markdown(data), data


def test_a_cache_document_s_markdown_is_read_without_decoding_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blobs = FileBlobStore(tmp_path)
    (page,) = _pages(1)
    blobs.put("cache/markdown/8/a-b.json", process._to_json(page))
    reordered = dict(reversed(asdict(page).items()))
    blobs.put("cache/markdown/8/c-d.json", json.dumps(reordered).encode())

    def whole(data: bytes) -> dict[str, object]:
        raise AssertionError("decoded whole")

    monkeypatch.setattr(stored, "_document", whole)
    assert read_markdown(blobs, "cache/markdown/8/a-b.json") == page.markdown
    with pytest.raises(AssertionError, match="decoded whole"):  # another shape: decoded
        read_markdown(blobs, "cache/markdown/8/c-d.json")
