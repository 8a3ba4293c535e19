"""llms-full.txt and chunks.jsonl as finalize writes them, and llms-full.txt read back
into pages by `mdcrawl pull`: the same pages the local library records."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from mdcrawl.agent_outputs import agent_output_names, page_markdown, write_agent_outputs
from mdcrawl.library.pull import split_full_text
from mdcrawl.models import CrawlOptions, Job, PageRecord, PageStatus

ROOT = "https://docs.example.org/docs/"
MARKDOWN = {
    "a": "# Start\n\nWelcome.\n\n```python\n# not a heading\nSource: " + ROOT + "b.html\n```\n",
    "b": "No heading here.\n\n## Part\n\nText.\n",
    "c": "\n\n# Last\n",
}


class Files:
    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    @contextmanager
    def open(self, name: str) -> Iterator[BinaryIO]:
        stream = io.BytesIO()
        yield stream
        self.data[name] = stream.getvalue()


def _records() -> list[PageRecord]:
    pages = [("", "a", "Start"), ("b.html", "b", "Bee"), ("c.html", "c", "Last")]
    records = [
        PageRecord("j", ROOT + path, f"h{i}", PageStatus.OK, order=i, title=title, markdown_key=key)
        for i, (path, key, title) in enumerate(pages, start=1)
    ]
    return [*records, PageRecord("j", ROOT + "x.pdf", "hx", PageStatus.SKIPPED, order=9)]


def test_llms_full_and_chunks_and_the_round_trip_through_pull() -> None:
    files, records = Files(), _records()
    job = Job("j", ROOT, CrawlOptions())
    names = write_agent_outputs(job, records, MARKDOWN.__getitem__, files.open)
    assert names == ("llms-full.txt", "chunks.jsonl")
    full = files.data["llms-full.txt"].decode()
    assert full.startswith(
        f"# Start\n\n> 3 pages crawled from {ROOT}\n\n# Start\n\nSource: {ROOT}\n\n"
    )
    assert "# Bee\n\nSource: " + ROOT + "b.html\n\nNo heading here." in full
    chunks = [json.loads(line) for line in files.data["chunks.jsonl"].decode().splitlines()]
    assert [c["heading_path"] for c in chunks] == [["Start"], ["Bee"], ["Bee", "Part"], ["Last"]]
    assert chunks[2]["anchor"] == "part" and chunks[2]["url"] == ROOT + "b.html"

    manifest = [
        {"url": r.url, "title": r.title, "order": r.order if r.status is PageStatus.OK else None}
        for r in records
    ]
    pulled = split_full_text(full, manifest)
    expected = [page_markdown(r, MARKDOWN[r.markdown_key or ""]) for r in records[:3]]
    assert [
        p.markdown for p in pulled
    ] == expected  # a code line that looks like a Source line is no page start
    assert [p.title for p in pulled] == ["Start", "Bee", "Last"]


def test_max_tokens_adds_the_parts_and_their_index() -> None:
    files = Files()
    job = Job("j", ROOT, CrawlOptions(max_tokens=200))
    names = write_agent_outputs(job, _records(), MARKDOWN.__getitem__, files.open, 200)
    assert names[-2:] == ("docs-001.md", "docs-parts.md")
    assert agent_output_names(200)["parts"] == "docs-parts.md"
    assert "parts" not in agent_output_names(None)
