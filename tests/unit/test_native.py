"""Markdown twins: where they are looked for, what counts as one, how they are cleaned."""

from __future__ import annotations

from mdcrawl.adapters.local.blobs import FileBlobStore
from mdcrawl.errors import HttpStatusError
from mdcrawl.models import CrawlOptions, FetchResult, Job, PageRecord, PageStatus
from mdcrawl.native import (
    NEGOTIATED,
    clean_twin,
    fetch_twins,
    looks_like_markdown,
    twin_candidates,
    with_native_twins,
)

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


class FakeFetcher:
    """Answers from a dict of (url, accept) -> (content type, body); anything else 404."""

    def __init__(self, answers: dict[tuple[str, str | None], tuple[str, bytes]]) -> None:
        self.answers, self.asked = answers, []

    async def fetch_text(self, url: str, accept: str | None = None) -> FetchResult:
        self.asked.append((url, accept))
        if (url, accept) not in self.answers:
            raise HttpStatusError(f"404 for {url}", 404)
        kind, body = self.answers[(url, accept)]
        return FetchResult(url, url, 200, {"content-type": kind}, body)


async def test_twins_by_file_then_by_content_negotiation(tmp_path) -> None:
    pages = [
        PageRecord("j", BASE, "h0", PageStatus.OK, markdown_key="m0"),
        PageRecord("j", BASE + "fs.html", "h1", PageStatus.OK, markdown_key="m1"),
        PageRecord("j", BASE + "net.html", "h2", PageStatus.OK, markdown_key="m2"),
    ]
    fetcher = FakeFetcher(
        {
            (BASE + "index.md", None): ("text/markdown", b"# API\n"),
            (BASE + "fs.html", NEGOTIATED): ("text/markdown", b"# fs\n"),
            (BASE + "net.html", NEGOTIATED): ("text/html", b"<html>no</html>"),
        }
    )
    blobs = FileBlobStore(tmp_path)
    job = Job("j", BASE, CrawlOptions(prefer_native=True))
    assert await fetch_twins(job, pages, fetcher, blobs) == 2
    swapped = with_native_twins(pages, blobs)
    assert [p.native for p in swapped] == ["md_twin", "md_twin", None]
    assert blobs.get(swapped[1].markdown_key or "") == b"# fs\n"
    assert swapped[2].markdown_key == "m2"


async def test_no_twin_for_the_start_page_means_no_more_probes() -> None:
    pages = [PageRecord("j", BASE + f"p{i}.html", f"h{i}", PageStatus.OK) for i in range(5)]
    fetcher = FakeFetcher({})
    job = Job("j", BASE + "p0.html", CrawlOptions(prefer_native=True))
    assert await fetch_twins(job, pages, fetcher, None) == 0  # type: ignore[arg-type]
    assert {url for url, _ in fetcher.asked} == {
        BASE + "p0.md",
        BASE + "p0.html.md",
        BASE + "p0.html",
    }
