"""Recording a crawl whose pages come from markdown cache documents the library has seen
before, in the same version: no markdown is read again (``KnownPage``), and the library
holds exactly what reading it would have given."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mdcrawl.library import Library, store
from mdcrawl.library.record import record_crawl
from mdcrawl.library.store import chunked
from mdcrawl.models import CrawlOptions, Job, PageRecord, PageStatus
from mdcrawl.names import BlobPrefix

ROOT = "https://docs.example.org/en/latest/"
TEXTS = {
    "index": "# Widgets\n\nWidgets for everyone.\n",
    "timeouts": "# Timeouts\n\n## Read timeout\n\nThe read timeout counts seconds between bytes.\n",
    "proxies": "Set `HTTPS_PROXY` in the environment.\n",  # no h1: the title is added
}


class Cache:
    """Markdown cache documents by key, each with a version, counting reads."""

    def __init__(self) -> None:
        self.texts = {_key(name): text for name, text in TEXTS.items()}
        self.versions = dict.fromkeys(self.texts, 1)
        self.read: list[str] = []

    def read_markdown(self, key: str) -> str:
        self.read.append(key)
        return self.texts[key]

    def version(self, key: str) -> object:
        return self.versions[key]

    def write(self, key: str, text: str) -> None:
        self.texts[key] = text
        self.versions[key] += 1


def _key(name: str) -> str:
    return f"{BlobPrefix.CACHE_MARKDOWN}8/{name}.json"


def _records(job_id: str, titles: dict[str, str] | None = None) -> list[PageRecord]:
    titles = titles or {}
    return [
        PageRecord(
            job_id=job_id,
            url=ROOT + ("" if name == "index" else f"{name}.html"),
            url_hash=f"h{order}",
            status=PageStatus.OK,
            order=order,
            title=titles.get(name, name.title()),
            words=5,
            markdown_key=_key(name),
        )
        for order, name in enumerate(TEXTS)
    ]


def _record(library: Library, cache: Cache, job_id: str, **titles: str):  # noqa: ANN202
    job = Job(job_id=job_id, url=ROOT, options=CrawlOptions(), created_at=1.7e9)
    return record_crawl(
        library, job, _records(job_id, titles), cache.read_markdown, None, version=cache.version
    )


def _rows(library: Library, sql: str) -> list[tuple]:
    with sqlite3.connect(library.path) as db:
        return db.execute(sql).fetchall()


def test_an_unchanged_recrawl_reads_no_markdown_and_stores_the_same_pages(
    tmp_path: Path,
) -> None:
    library, cache = Library(tmp_path), Cache()
    first = _record(library, cache, "job-1")
    assert len(cache.read) == len(TEXTS)
    pages = library.pages(first.snapshot)
    cache.read.clear()
    second = _record(library, cache, "job-2")
    assert cache.read == []
    assert library.pages(second.snapshot) == pages
    assert second.changes.unchanged == len(TEXTS)
    assert second.snapshot.tokens == first.snapshot.tokens > 0
    assert library.search("seconds between bytes")[0].url == ROOT + "timeouts.html"
    # the page without an h1 is stored with its title added, known or read
    assert library.read_page(ROOT + "proxies.html").markdown.startswith("# Proxies\n")


def test_a_document_written_again_or_a_new_title_is_read_again(tmp_path: Path) -> None:
    library, cache = Library(tmp_path), Cache()
    _record(library, cache, "job-1")
    cache.write(_key("timeouts"), "# Timeouts\n\nNo read timeout any more.\n")
    cache.read.clear()
    recorded = _record(library, cache, "job-2", proxies="Proxy settings")
    assert sorted(cache.read) == sorted([_key("timeouts"), _key("proxies")])
    changed = [p.url for p in recorded.changes.changed]
    assert changed == [ROOT + "timeouts.html", ROOT + "proxies.html"]  # its h1 is its title
    assert "any more" in library.read_page(ROOT + "timeouts.html").markdown
    assert library.read_page(ROOT + "proxies.html").markdown.startswith("# Proxy settings\n")


def test_a_known_page_is_read_when_its_chunks_must_be_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library, cache = Library(tmp_path), Cache()
    _record(library, cache, "job-1")
    monkeypatch.setattr(store, "chunking_digest", lambda: "another chunker")
    cache.read.clear()
    recorded = _record(library, cache, "job-2")
    assert len(cache.read) == len(TEXTS)  # each read once, for its chunks
    bodies = sorted(body for (body,) in _rows(library, "SELECT body FROM chunks"))
    pages = library.pages(recorded.snapshot)
    assert bodies == sorted(c.text for page in pages for c in chunked(page))
