"""Markdown twins: where they are looked for, what counts as one, how they are cleaned."""

from __future__ import annotations

from mdcrawl.models import FetchResult
from mdcrawl.native import clean_twin, looks_like_markdown, twin_candidates

BASE = "https://docs.example.org/api/"


def test_twin_candidates() -> None:
    assert twin_candidates(BASE + "fs.html") == [BASE + "fs.md", BASE + "fs.html.md"]
    assert twin_candidates(BASE) == [BASE + "index.md", BASE + "index.html.md"]
    assert twin_candidates(BASE + "fs?x=1#y") == [BASE + "fs.md"]


def _answer(body: bytes, kind: str, url: str = BASE + "fs.md", status: int = 200) -> FetchResult:
    return FetchResult(url, url, status, {"content-type": kind}, body)


def test_only_markdown_answers_count() -> None:
    assert looks_like_markdown(_answer(b"# fs\n", "text/markdown; charset=utf-8"))
    assert looks_like_markdown(_answer(b"# fs\n", "application/octet-stream"))
    assert not looks_like_markdown(_answer(b"# fs\n", "application/octet-stream", BASE + "x"))
    assert not looks_like_markdown(_answer(b"<!DOCTYPE html><p>Not found", "text/plain"))
    assert not looks_like_markdown(_answer(b"# fs\n", "text/html"))
    assert not looks_like_markdown(_answer(b"  \n", "text/markdown"))


def test_clean_twin_drops_comments_and_points_links_at_pages() -> None:
    twin = (
        "# File system\n\n<!--introduced_in=v0.10.0-->\n\n<!-- YAML\nadded: `v1`\n-->\n\n"
        "See [buffers](buffer.md#sizes) and [`fs.open()`][].\n\n"
        "```html\n<!-- kept: it is code -->\n```\n\n"
        "[`fs.open()`]: fs.md#fsopen\n[other]: ../guide/\n"
    )
    pages = {BASE + "buffer.html", BASE + "fs.html"}
    cleaned = clean_twin(twin, BASE + "fs.md", pages)
    assert "introduced_in" not in cleaned and "YAML" not in cleaned
    assert "<!-- kept: it is code -->" in cleaned
    assert f"[buffers]({BASE}buffer.html#sizes)" in cleaned
    assert f"[`fs.open()`]: {BASE}fs.html#fsopen" in cleaned
    assert "[other]: https://docs.example.org/guide/" in cleaned  # not a crawled page: absolute
    assert "\n\n\n" not in cleaned
