"""A page's stored markdown: the job's own copy, or the markdown cache's document."""

from __future__ import annotations

import json
from pathlib import Path

from mdcrawl.adapters.local import FileBlobStore
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
