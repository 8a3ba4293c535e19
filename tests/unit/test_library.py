"""The docs library: snapshots by (site, version), BM25 search, sections, changes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from mdcrawl.chunks import Chunk
from mdcrawl.library import Library, LibraryPage, Snapshot, changes_md, store
from mdcrawl.library.query import fts_query
from mdcrawl.library.record import site_of
from mdcrawl.library.sections import section_of
from mdcrawl.library.store import chunked
from mdcrawl.urls import in_scope, scope_for
from mdcrawl.versions import version_info, version_label

ROOT = "https://docs.example.org/en/latest/"
PAGES = [
    LibraryPage(ROOT, "Widgets", "# Widgets\n\nWidgets for everyone.\n"),
    LibraryPage(
        ROOT + "timeouts.html",
        "Timeouts",
        "# Timeouts\n\n## Connect timeout\n\nPass `timeout=(3, 10)` to limit the connect "
        "phase.\n\n## Read timeout\n\nThe read timeout counts seconds between bytes.\n",
    ),
    LibraryPage(
        ROOT + "proxies.html",
        "Proxies",
        "# Proxies\n\nSet `HTTPS_PROXY` in the environment, or pass proxies= per session.\n",
    ),
]


def _snapshot(version: str = "latest", at: float = 1000.0) -> Snapshot:
    return Snapshot(0, "docs.example.org/", version, ROOT, "job", at, 0, 0, "")


def test_search_ranks_the_answering_section_first_and_cites_it(tmp_path: Path) -> None:
    library = Library(tmp_path)
    library.record(_snapshot(), PAGES)
    hits = library.search("how long does it wait between bytes when reading?")
    assert hits[0].link == ROOT + "timeouts.html#read-timeout"
    assert hits[0].heading_path == ("Timeouts", "Read timeout")
    assert hits[0].title == "Timeouts" and hits[0].version == "latest"
    assert library.search("proxy environment variable")[0].url == ROOT + "proxies.html"
    assert library.search('"unbalanced AND -(') == []  # nothing the user types is syntax


def test_a_new_crawl_of_a_version_replaces_its_chunks_and_reports_changes(
    tmp_path: Path,
) -> None:
    library = Library(tmp_path)
    _, first = library.record(_snapshot(at=1000.0), PAGES)
    assert first.previous is None and "First crawl" in changes_md(first)
    edited = LibraryPage(PAGES[2].url, "Proxies", PAGES[2].markdown + "\nSOCKS works too.\n")
    added = LibraryPage(ROOT + "socks.html", "SOCKS", "# SOCKS\n\nInstall the extra.\n")
    stored, changes = library.record(_snapshot(at=2000.0), [PAGES[0], edited, added])
    assert [p.url for p in changes.added] == [added.url]
    assert [p.url for p in changes.removed] == [PAGES[1].url]
    assert [p.url for p in changes.changed] == [edited.url]
    assert changes.unchanged == 1
    assert library.search("read timeout bytes") == []  # only the current snapshot is searched
    assert [s.id for s in library.snapshots()] == [stored.id]
    assert library.changes("example.org") == changes
    patch = library.patch(changes)
    assert patch.startswith(f"--- a {edited.url}\n+++ b {edited.url}\n")
    assert "+SOCKS works too." in patch
    report = changes_md(changes)
    assert "1 added, 1 removed, 1 changed, 1 unchanged" in report
    assert f"- [SOCKS]({added.url})" in report


def test_versions_are_kept_apart_and_filtered(tmp_path: Path) -> None:
    library = Library(tmp_path)
    library.record(_snapshot("latest"), PAGES)
    library.record(_snapshot("2.0"), PAGES[:2])
    assert sorted(s.version for s in library.snapshots()) == ["2.0", "latest"]
    assert {h.version for h in library.search("timeout", limit=10)} == {"2.0", "latest"}
    assert {h.version for h in library.search("timeout", version="2.0")} == {"2.0"}
    assert library.search("timeout", site="elsewhere.org") == []


def test_read_page_whole_or_one_section(tmp_path: Path) -> None:
    library = Library(tmp_path)
    library.record(_snapshot(), PAGES)
    page = library.read_page(ROOT + "timeouts.html#anything")
    assert page is not None and page.markdown == PAGES[1].markdown
    section = library.read_page(ROOT + "timeouts.html", section="connect-timeout")
    assert section is not None
    assert section.markdown == "## Connect timeout\n\nPass `timeout=(3, 10)` to limit the connect phase.\n"
    assert library.read_page(ROOT + "timeouts.html", section="Read Timeout") is not None
    assert library.read_page(ROOT + "timeouts.html", section="nope") is None
    assert library.read_page(ROOT + "missing.html") is None
    assert library.read_page(ROOT.rstrip("/")) is not None  # with or without the slash


def test_section_of_takes_subsections_and_stops_at_a_sibling() -> None:
    markdown = "# A\n\nintro\n\n## B\n\nb text\n\n### B1\n\nb1\n\n## C\n\nc\n"
    assert section_of(markdown, "b") == "## B\n\nb text\n\n### B1\n\nb1\n"
    assert section_of(markdown, "#c") == "## C\n\nc\n"


@pytest.mark.parametrize(
    ("url", "version", "locale", "site"),
    [
        ("https://requests.readthedocs.io/en/latest/", "latest", "en", "requests.readthedocs.io/"),
        ("https://docs.python.org/3.11/", "3.11", None, "docs.python.org/"),
        ("https://host/docs/v2/intro.html", "v2", None, "host/docs/"),
        ("https://host/ja/2.x/", "2.x", "ja", "host/"),
        ("https://host/go/intro.html", None, None, "host/go/"),
        ("http://127.0.0.1:8000/index.html", None, None, "127.0.0.1:8000/"),
    ],
)
def test_version_and_locale_segments(
    url: str, version: str | None, locale: str | None, site: str
) -> None:
    info = version_info(url)
    assert (info.version, info.locale, info.site) == (version, locale, site)


def test_version_label_prefers_the_label_then_the_url_then_the_date() -> None:
    assert version_label(ROOT, "mine", 0.0) == "mine"
    assert version_label(ROOT, None, 0.0) == "latest"
    assert version_label("https://host/docs/", None, 86400.0 * 365) == "1971-01-01"
    assert site_of("https://host/en/stable/api/index.html") == "host/api/"


def test_fts_query_quotes_words_and_drops_filler() -> None:
    assert fts_query("How do I set a timeout?") == '"set" OR "timeout"'
    assert fts_query('x AND "y') == '"and"'
    assert fts_query("???") == ""


def test_sibling_versions_and_locales_stay_out_of_a_versioned_crawl() -> None:
    scope = scope_for("https://h.org/en/latest/index.html")
    assert in_scope("https://h.org/en/latest/api/fs.html", scope)
    assert not in_scope("https://h.org/en/stable/api/fs.html", scope)
    assert not in_scope("https://h.org/fr/latest/api/fs.html", scope)
    widened = scope_for("https://h.org/en/latest/", include=["/**"])  # globs only narrow
    assert not in_scope("https://h.org/en/3.2/index.html", widened)


class _CountingChunker:
    """The library's chunker, noting which pages it was asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, page: LibraryPage) -> list[Chunk]:
        self.asked.append(page.url)
        return chunked(page)


def _chunk_rows(library: Library) -> list[tuple[int, str, str]]:
    with sqlite3.connect(library.path) as db:
        return db.execute("SELECT rowid, url, body FROM chunks ORDER BY rowid").fetchall()


def test_an_unchanged_recrawl_indexes_nothing_again(tmp_path: Path) -> None:
    library = Library(tmp_path)
    library.record(_snapshot(at=1000.0), PAGES)
    before = _chunk_rows(library)
    again = _CountingChunker()
    stored, changes = library.record(_snapshot(at=2000.0), PAGES, again)
    assert again.asked == [] and _chunk_rows(library) == before
    assert changes.unchanged == len(PAGES)
    hits = library.search("read timeout bytes", version="latest")
    assert hits[0].link == ROOT + "timeouts.html#read-timeout"
    assert (hits[0].site, hits[0].version) == (stored.site, stored.version)


def test_a_recrawl_indexes_only_the_pages_that_changed(tmp_path: Path) -> None:
    library = Library(tmp_path)
    library.record(_snapshot(at=1000.0), PAGES)
    library.record(_snapshot("2.0"), PAGES)  # another version: never touched below
    edited = LibraryPage(PAGES[1].url, "Timeouts", "# Timeouts\n\nNo read timeout any more.\n")
    retitled = LibraryPage(PAGES[2].url, "Proxy settings", PAGES[2].markdown)
    chunker = _CountingChunker()
    library.record(_snapshot(at=2000.0), [PAGES[0], edited, retitled], chunker)
    assert chunker.asked == [edited.url, retitled.url]
    latest = library.search("timeout", version="latest")
    assert [h.url for h in latest] == [edited.url]  # the old sections are gone
    assert "Proxy settings" in {h.title for h in library.search("environment", version="latest")}
    assert len(library.search("bytes", version="2.0")) == 1
    now = [PAGES[0], edited, retitled]
    expected = [c.text for page in [*PAGES, *now] for c in chunked(page)]  # 2.0's, latest's
    assert sorted(body for _, _, body in _chunk_rows(library)) == sorted(expected)


def test_new_chunking_code_indexes_every_page_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = Library(tmp_path)
    library.record(_snapshot(at=1000.0), PAGES)
    monkeypatch.setattr(store, "chunking_digest", lambda: "another chunker")
    chunker = _CountingChunker()
    library.record(_snapshot(at=2000.0), PAGES, chunker)
    assert chunker.asked == [p.url for p in PAGES]
    indexed = sorted(body for _, _, body in _chunk_rows(library))
    assert indexed == sorted(c.text for page in PAGES for c in chunked(page))  # once, not twice


@pytest.mark.parametrize(
    "path", [(), ("Intro",), ('Say "hi"', "back\\slash", "tab\tand\nline", "\u2028 \U0001f600 é")]
)
def test_heading_paths_are_stored_as_json_would_write_them(path: tuple[str, ...]) -> None:
    from mdcrawl.library.store import _json_strings

    assert _json_strings(path) == json.dumps(list(path), ensure_ascii=False)
    assert tuple(json.loads(_json_strings(path))) == path


def test_chunks_given_as_their_lines_are_indexed_as_the_chunks_themselves(
    tmp_path: Path,
) -> None:
    """A chunker may answer a page's ``chunks.jsonl`` lines (a local crawl's kept ones):
    every column of every chunk row is what the ``Chunk`` objects give, including text
    with characters other readers would cut lines at, and a page with no chunk."""
    from mdcrawl.adapters.local.blobs import FileBlobStore
    from mdcrawl.adapters.local.chunks import ChunkCache
    from mdcrawl.library.record import kept_chunks

    odd = LibraryPage(
        ROOT + "odd.html",
        "Odd — “quoted”",
        "# Odd\n\n## Line\u2028break \u0085 and \\n\n\ntext \"q\" é\n\n## Two\n\nmore\n",
    )
    pages = [*PAGES, odd, LibraryPage(ROOT + "empty.html", "Empty", "")]
    objects, lines = Library(tmp_path / "objects"), Library(tmp_path / "lines")
    objects.record(_snapshot(), pages)
    lines.record(_snapshot(), pages, kept_chunks(ChunkCache(FileBlobStore(tmp_path / "b"))))
    with sqlite3.connect(objects.path) as a, sqlite3.connect(lines.path) as b:
        query = "SELECT rowid, * FROM chunks ORDER BY rowid"
        rows = a.execute(query).fetchall()
        assert len(rows) > len(PAGES) and b.execute(query).fetchall() == rows


def test_a_page_gone_takes_its_chunks_and_a_page_added_keeps_the_others(tmp_path: Path) -> None:
    library = Library(tmp_path)
    library.record(_snapshot(at=1000.0), PAGES)
    library.record(_snapshot(at=2000.0), PAGES[:2])  # the proxies page is gone, the rest kept
    assert library.search("proxies environment") == []
    assert {url for _, url, _ in _chunk_rows(library)} == {p.url for p in PAGES[:2]}
    before = _chunk_rows(library)
    added = LibraryPage(ROOT + "socks.html", "SOCKS", "# SOCKS\n\nInstall the extra.\n")
    library.record(_snapshot(at=3000.0), [*PAGES[:2], added])  # only added: nothing dropped
    assert _chunk_rows(library)[: len(before)] == before
    assert library.search("install extra")[0].url == added.url
    assert len(_chunk_rows(library)) == len(before) + len(chunked(added))


def test_pages_held_as_utf8_are_recorded_as_their_strings_are(tmp_path: Path) -> None:
    """``EncodedPage`` (a page's markdown held as UTF-8): the same texts (as TEXT, not
    BLOB), hashes, tokens and chunks, from kept chunk lines too, whatever characters the
    markdown holds (Latin-1, the BMP, past it)."""
    from mdcrawl.adapters.local.blobs import FileBlobStore
    from mdcrawl.adapters.local.chunks import ChunkCache
    from mdcrawl.library.record import kept_chunks
    from mdcrawl.library.store import EncodedPage
    from mdcrawl.tokens import estimate_tokens

    odd = LibraryPage(ROOT + "odd.html", "Odd", "# Odd é\n\n## Arrows → \U0001f600\n\nmore\n")
    pages = [*PAGES, odd, LibraryPage(ROOT + "empty.html", "Empty", "")]
    encoded = [
        EncodedPage(p.url, p.title, p.markdown.encode(), estimate_tokens(p.markdown))
        for p in pages
    ]
    for name, recorded in (("str", pages), ("utf8", encoded)):
        chunker = kept_chunks(ChunkCache(FileBlobStore(tmp_path / name / "blobs")))
        Library(tmp_path / name).record(_snapshot(), recorded, chunker)
    queries = (
        "SELECT hash, markdown, typeof(markdown) FROM texts ORDER BY rowid",
        "SELECT * FROM pages ORDER BY position",
        "SELECT rowid, * FROM chunks ORDER BY rowid",
        "SELECT pages, tokens FROM snapshots",
    )
    a = sqlite3.connect(tmp_path / "str" / store.LIBRARY_FILE)
    b = sqlite3.connect(tmp_path / "utf8" / store.LIBRARY_FILE)
    for query in queries:
        assert b.execute(query).fetchall() == a.execute(query).fetchall(), query
    assert {t for (t,) in b.execute("SELECT typeof(markdown) FROM texts")} == {"text"}
    a.close()
    b.close()
    kept = sorted(p.name for p in (tmp_path / "utf8" / "blobs").rglob("*.jsonl"))
    assert kept == sorted(p.name for p in (tmp_path / "str" / "blobs").rglob("*.jsonl"))
