"""The local docs library: every crawl stored as (site, version) in one SQLite file under
the cache folder, with its pages' markdown and a full-text index of their chunks.

- ``snapshots``: one row per recorded crawl (site, version label, start URL, job, time,
  pages, tokens, output folder). The latest snapshot of a (site, version) is current;
  search and ``read_page`` look at current snapshots only, ``diff`` at the two latest of
  a site.
- ``texts``: page markdown by sha256, shared by every snapshot that has the same page.
- ``pages``: (snapshot, url) → title, text hash, tokens, reading position.
- ``known_texts``: (markdown cache key, title) → the page text's hash and tokens, with
  the cache document's version (size, mtime) they were read from: a re-crawl answered
  from the cache records its pages without reading their markdown again (``KnownPage``).
- ``chunks``: an FTS5 table (BM25 ranking, Porter stemming) of the current snapshots'
  chunks (``mdcrawl.chunks``). A page whose URL, title and markdown are those it had in
  the (site, version)'s previous snapshot keeps the chunks indexed then (their
  ``snapshot`` column names that earlier snapshot of the same site and version): a
  re-crawl indexes only what changed. The other chunks of a superseded snapshot are
  dropped.

One connection per thread, opened on first use: the library is shared by the CLI,
``mdcrawl mcp`` and ``serve``, possibly at once (WAL lets readers go on while a crawl is
recorded).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from pathlib import Path

from ..adapters.local.chunks import chunking_digest
from ..chunks import Chunk, chunk_page
from ..tokens import estimate_tokens
from .changes import Changes, PageState, compare, page_diff
from .query import fts_query
from .sections import section_of

LIBRARY_FILE = "library.sqlite3"
# Column weights for bm25(): a word in a heading says more than a word in the body; the
# scope column ("s<snapshot id>", for filtering) never counts.
WEIGHTS = (4.0, 6.0, 1.0, 2.0, 0.0)  # title, headings, body, url words, scope
# Per connection: the index is read through mmap and a large page cache, so a repeated
# search reads no page twice (most of a search's time on a 5,000-page library).
PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA mmap_size=268435456", "PRAGMA cache_size=-65536")

FTS_HASH_BYTES = 8 << 20  # held while a crawl is recorded, after its pool has gone
# A record writes far more than it reads: SQLite's default cache (2 MB) records a crawl in
# the same CPU time as the 64 MB one searches are given, which a record only filled (a
# 2,400-page crawl's record held 64 MB more for nothing).
RECORD_CACHE = "PRAGMA cache_size=-2000"
SEARCH_CACHE = PRAGMAS[-1]

SCHEMA = """
CREATE TABLE IF NOT EXISTS snapshots (
    id INTEGER PRIMARY KEY, site TEXT NOT NULL, version TEXT NOT NULL, url TEXT NOT NULL,
    job_id TEXT NOT NULL, crawled_at REAL NOT NULL, pages INTEGER NOT NULL,
    tokens INTEGER NOT NULL, out_dir TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS snapshots_site ON snapshots (site, version, id);
CREATE TABLE IF NOT EXISTS texts (hash TEXT PRIMARY KEY, markdown TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
    snapshot INTEGER NOT NULL, url TEXT NOT NULL, title TEXT NOT NULL, hash TEXT NOT NULL,
    tokens INTEGER NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (snapshot, url));
CREATE INDEX IF NOT EXISTS pages_url ON pages (url);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS known_texts (
    key TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, hash TEXT NOT NULL,
    tokens INTEGER NOT NULL, PRIMARY KEY (key, title));
CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5 (
    title, headings, body, where_, scope, url UNINDEXED, anchor UNINDEXED, path UNINDEXED,
    snapshot UNINDEXED, tokenize = 'porter unicode61');
"""


@dataclass(frozen=True)
class LibraryPage:
    url: str
    title: str
    markdown: str


@dataclass(frozen=True)
class KnownPage:
    """A page whose text the library already holds (``texts``, by ``hash``): recorded
    without its markdown, which ``read`` gives only if its chunks must be made again."""

    url: str
    title: str
    hash: str
    tokens: int
    read: Callable[[], str]

    @property
    def markdown(self) -> str:
        return self.read()


@dataclass(frozen=True)
class EncodedPage:
    """A page whose markdown is held as UTF-8 (``data``), with its tokens: a crawl's
    pages are all held while it is recorded, and a str takes 4 bytes a character once
    the page holds one character past U+FFFF (a 2,400-page API reference's markdown:
    100 MB as str, 30 MB so). Hashed, stored and chunked from these bytes as they are."""

    url: str
    title: str
    data: bytes
    tokens: int

    @property
    def markdown(self) -> str:
        return self.data.decode("utf-8")


# Any page a crawl is recorded from.
Page = LibraryPage | KnownPage | EncodedPage


# Where a page's text comes from: a cache document's key and version, and its title.
TextMark = tuple[str, str, str]  # (key, version, title)


# A page's chunks (default: chunk_page now), or their ``chunks.jsonl`` lines (locally the
# ones its pool worker made, read as they are kept: ``_chunk_fields``).
Chunker = Callable[[Page], "Sequence[Chunk] | bytes"]


def chunked(page: Page) -> list[Chunk]:
    return chunk_page(page.markdown, page.url, page.title)


@dataclass(frozen=True)
class Snapshot:
    id: int
    site: str
    version: str
    url: str
    job_id: str
    crawled_at: float
    pages: int
    tokens: int
    out_dir: str

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Hit:
    site: str
    version: str
    url: str
    title: str
    heading_path: tuple[str, ...]
    anchor: str
    text: str
    score: float  # bm25: lower is better

    @property
    def link(self) -> str:
        return f"{self.url}#{self.anchor}" if self.anchor else self.url

    def to_dict(self) -> dict[str, object]:
        data = dict(self.__dict__)
        data["heading_path"] = list(self.heading_path)
        data["link"] = self.link
        return data


class Library:
    """The library in ``root``/library.sqlite3 (created on first use)."""

    def __init__(self, root: Path) -> None:
        self.path = root / LIBRARY_FILE
        self._local = threading.local()

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection, in a transaction."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = self._connect()
        with db:
            yield db

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30)
        for pragma in PRAGMAS:
            db.execute(pragma)
        db.executescript(SCHEMA)
        return db

    @contextlib.contextmanager
    def _recording(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection, in a transaction, with a record's small cache."""
        with self._db() as db:
            db.execute(RECORD_CACHE)
            try:
                yield db
            finally:
                db.execute(SEARCH_CACHE)

    def close(self) -> None:
        """Close this thread's connection (the next call opens a new one)."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    # --- recording a crawl ----------------------------------------------------------------

    def known(self, marks: Sequence[TextMark]) -> dict[tuple[str, str], tuple[str, int]]:
        """(key, title) → (text hash, tokens) of the ``marks`` recorded before from the
        same cache document version (``remember``)."""
        found: dict[tuple[str, str], tuple[str, int]] = {}
        with self._db() as db:
            for key, version, title in marks:
                row = db.execute(
                    "SELECT version, hash, tokens FROM known_texts WHERE key = ? AND title = ?",
                    (key, title),
                ).fetchone()
                if row is not None and row[0] == version:
                    found[(key, title)] = (row[1], row[2])
        return found

    def record(
        self,
        snapshot: Snapshot,
        pages: Sequence[Page],
        chunker: Chunker = chunked,
        marks: Sequence[TextMark | None] = (),
        settle: Callable[[Snapshot], Snapshot] | None = None,
    ) -> tuple[Snapshot, Changes]:
        """Store a finished crawl as the current snapshot of its (site, version) and say
        what changed since the site's previous snapshot. ``snapshot.id`` is ignored;
        ``chunker`` is asked only for pages whose chunks are not indexed already.
        ``marks``, per page (None: none), are remembered with the page's text hash, so
        that the next crawl can hand that page over as a ``KnownPage``. ``settle``, when
        given, is called with the snapshot as written, everything else written too, before
        the transaction commits: it answers the snapshot as it must be committed (only its
        ``crawled_at`` may differ), or raises, and then nothing is recorded."""
        states = [PageState(p.url, p.title, _text_hash(p)) for p in pages]
        tokens = sum(_tokens(p) for p in pages)
        with self._recording() as db:
            previous = _latest(db, snapshot.site)
            cursor = db.execute(
                "INSERT INTO snapshots (site, version, url, job_id, crawled_at, pages, tokens,"
                " out_dir) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    snapshot.site,
                    snapshot.version,
                    snapshot.url,
                    snapshot.job_id,
                    snapshot.crawled_at,
                    len(pages),
                    tokens,
                    snapshot.out_dir,
                ),
            )
            stored = Snapshot(
                **{
                    **snapshot.__dict__,
                    "id": int(cursor.lastrowid or 0),
                    "pages": len(pages),
                    "tokens": tokens,
                }
            )
            _store_pages(db, stored.id, pages, states)
            _remember(db, pages, states, marks)
            _replace_chunks(db, stored, pages, states, chunker)
            before = _states(db, previous.id) if previous else None
            if settle is not None:
                stored = _settled(db, stored, settle(stored))
        changes = compare(
            stored.site,
            stored.version,
            states,
            before,
            previous.version if previous else None,
            previous.crawled_at if previous else None,
        )
        return stored, changes

    def holds_job(self, job_id: str) -> bool:
        """Whether a snapshot of the job ``job_id`` is recorded."""
        with self._db() as db:
            row = db.execute("SELECT 1 FROM snapshots WHERE job_id = ?", (job_id,)).fetchone()
        return row is not None

    # --- reading --------------------------------------------------------------------------

    def snapshots(self) -> list[Snapshot]:
        """The current snapshot of every (site, version), by site then newest first."""
        with self._db() as db:
            rows = db.execute(
                "SELECT * FROM snapshots WHERE id IN (SELECT max(id) FROM snapshots"
                " GROUP BY site, version) ORDER BY site, crawled_at DESC"
            ).fetchall()
        return [Snapshot(*row) for row in rows]

    def search(
        self, query: str, site: str | None = None, version: str | None = None, limit: int = 10
    ) -> list[Hit]:
        """Ranked passages for ``query`` (BM25 over title, headings, text and URL words)."""
        match = fts_query(query)
        if not match:
            return []
        snapshots = self.snapshots()
        wanted = [s for s in snapshots if _wanted(s, site, version)]
        if not wanted:
            return []
        with self._db() as db:
            # a chunk names the snapshot that indexed it: the current one or an earlier
            # one of the same (site, version), whose chunks for unchanged pages it kept
            owner = _owners(db, wanted)
            if len(wanted) < len(snapshots):  # narrowed: only chunks of these snapshots
                scopes = " OR ".join(f'"s{i}"' for i in owner)
                match = f"({match}) AND scope : ({scopes})"
            rows = db.execute(
                f"SELECT snapshot, url, title, path, anchor, body, bm25(chunks, {_weights()})"
                " AS score FROM chunks WHERE chunks MATCH ? ORDER BY score LIMIT ?",
                (match, limit),
            ).fetchall()
        return [
            Hit(
                owner[s].site,
                owner[s].version,
                url,
                title,
                tuple(json.loads(path)),
                anchor,
                body,
                score,
            )
            for s, url, title, path, anchor, body, score in rows
        ]

    def read_page(
        self, url: str, section: str | None = None, site: str | None = None
    ) -> LibraryPage | None:
        """A page of a current snapshot by URL (the newest crawl that has it), whole or
        only the section whose heading or anchor is ``section``; None if not found."""
        current = {s.id for s in self.snapshots() if _wanted(s, site, None)}
        with self._db() as db:
            rows = db.execute(
                "SELECT p.snapshot, p.url, p.title, t.markdown FROM pages p JOIN texts t"
                " ON t.hash = p.hash WHERE p.url IN (?, ?, ?) ORDER BY p.snapshot DESC",
                _url_variants(url),
            ).fetchall()
        for snapshot, found, title, markdown in rows:
            if snapshot in current:
                if section:
                    part = section_of(markdown, section)
                    return None if part is None else LibraryPage(found, title, part)
                return LibraryPage(found, title, markdown)
        return None

    def pages(self, snapshot: Snapshot) -> list[LibraryPage]:
        """Every page of ``snapshot``, in reading order."""
        with self._db() as db:
            rows = db.execute(
                "SELECT p.url, p.title, t.markdown FROM pages p JOIN texts t ON t.hash = p.hash"
                " WHERE p.snapshot = ? ORDER BY p.position",
                (snapshot.id,),
            ).fetchall()
        return [LibraryPage(*row) for row in rows]

    def changes(self, site: str) -> Changes | None:
        """The latest crawl of ``site`` against the one before it; None for an unknown
        site."""
        with self._db() as db:
            name = _site_named(db, site)
            if name is None:
                return None
            rows = db.execute(
                "SELECT * FROM snapshots WHERE site = ? ORDER BY id DESC LIMIT 2", (name,)
            ).fetchall()
            latest = Snapshot(*rows[0])
            previous = Snapshot(*rows[1]) if len(rows) > 1 else None
            now = _states(db, latest.id)
            before = _states(db, previous.id) if previous else None
        return compare(
            latest.site,
            latest.version,
            now,
            before,
            previous.version if previous else None,
            previous.crawled_at if previous else None,
        )

    def patch(self, changes: Changes) -> str:
        """Unified diffs of the changed pages of ``changes`` (as ``changes`` returned)."""
        with self._db() as db:
            rows = db.execute(
                "SELECT id FROM snapshots WHERE site = ? ORDER BY id DESC LIMIT 2",
                (changes.site,),
            ).fetchall()
            if len(rows) < 2:
                return ""
            out = []
            for page in changes.changed:
                before = _markdown(db, rows[1][0], page.url)
                after = _markdown(db, rows[0][0], page.url)
                out.append(page_diff(page.url, before, after))
        return "\n".join(out)


def _settled(db: sqlite3.Connection, stored: Snapshot, settled: Snapshot) -> Snapshot:
    """The snapshot row as ``settle`` answered it: the crawl's time, known only once its
    outputs are written (the rest of the row is the crawl's already)."""
    if settled.crawled_at != stored.crawled_at:
        db.execute(
            "UPDATE snapshots SET crawled_at = ? WHERE id = ?", (settled.crawled_at, stored.id)
        )
    return replace(stored, crawled_at=settled.crawled_at)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _text_hash(page: Page) -> str:
    if isinstance(page, EncodedPage):
        return hashlib.sha256(page.data).hexdigest()
    return page.hash if isinstance(page, KnownPage) else _hash(page.markdown)


def _tokens(page: Page) -> int:
    if isinstance(page, LibraryPage):
        return estimate_tokens(page.markdown)
    return page.tokens


def _text(page: LibraryPage | EncodedPage) -> str | bytes:
    """The page's markdown as ``texts`` stores it (UTF-8 bytes are cast to that text)."""
    return page.data if isinstance(page, EncodedPage) else page.markdown


def _remember(
    db: sqlite3.Connection,
    pages: Sequence[Page],
    states: list[PageState],
    marks: Sequence[TextMark | None],
) -> None:
    """Note each marked page's text hash and tokens (see ``known``); a page already
    known by the same mark needs no new note."""
    db.executemany(
        "INSERT OR REPLACE INTO known_texts (key, title, version, hash, tokens)"
        " VALUES (?, ?, ?, ?, ?)",
        [
            (mark[0], mark[2], mark[1], state.hash, _tokens(page))
            for page, state, mark in zip(pages, states, marks, strict=False)
            if mark is not None and not isinstance(page, KnownPage)
        ],
    )


def _weights() -> str:
    return ", ".join(str(w) for w in WEIGHTS)


def _wanted(snapshot: Snapshot, site: str | None, version: str | None) -> bool:
    if site and site not in snapshot.site and site != snapshot.url:
        return False
    return not version or version == snapshot.version


def _latest(db: sqlite3.Connection, site: str) -> Snapshot | None:
    row = db.execute(
        "SELECT * FROM snapshots WHERE site = ? ORDER BY id DESC LIMIT 1", (site,)
    ).fetchone()
    return Snapshot(*row) if row else None


def _owners(db: sqlite3.Connection, current: Sequence[Snapshot]) -> dict[int, Snapshot]:
    """Every snapshot id of the ``current`` snapshots' (site, version)s -> the current one."""
    by_edition = {(s.site, s.version): s for s in current}
    rows = db.execute("SELECT id, site, version FROM snapshots").fetchall()
    return {i: by_edition[(site, v)] for i, site, v in rows if (site, v) in by_edition}


def _site_named(db: sqlite3.Connection, site: str) -> str | None:
    """An exact site name, else the one site whose name contains ``site``."""
    names = [r[0] for r in db.execute("SELECT DISTINCT site FROM snapshots")]
    if site in names:
        return site
    matching = [n for n in names if site in n]
    return matching[0] if len(matching) == 1 else None


def _store_pages(
    db: sqlite3.Connection,
    snapshot: int,
    pages: Sequence[Page],
    states: list[PageState],
) -> None:
    db.executemany(
        "INSERT OR IGNORE INTO texts (hash, markdown) VALUES (?, CAST(? AS TEXT))",
        [
            (s.hash, _text(p))
            for p, s in zip(pages, states, strict=True)
            if not isinstance(p, KnownPage)  # its text is there already
        ],
    )
    db.executemany(
        "INSERT OR REPLACE INTO pages (snapshot, url, title, hash, tokens, position)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [
            (snapshot, p.url, p.title, s.hash, _tokens(p), i)
            for i, (p, s) in enumerate(zip(pages, states, strict=True))
        ],
    )


def _replace_chunks(
    db: sqlite3.Connection,
    stored: Snapshot,
    pages: Sequence[Page],
    states: list[PageState],
    chunker: Chunker,
) -> None:
    """Index the new snapshot's chunks: a page unchanged since the (site, version)'s
    previous snapshot keeps its indexed chunks; the others' old chunks are dropped and
    their new ones indexed."""
    older = [
        row[0]
        for row in db.execute(
            "SELECT id FROM snapshots WHERE site = ? AND version = ? AND id < ?",
            (stored.site, stored.version, stored.id),
        )
    ]
    same_code = _same_chunking(db, stored)
    previous = _states(db, older[-1]) if older else []
    kept = _unchanged(previous, states) if same_code else set()
    # Every chunk left of the older snapshots is a page of the previous one (each record
    # drops the rest): when all of those are kept, there is nothing to drop, and the
    # scan of the whole index that finds it (every chunk of the site) is skipped.
    if not {state.url for state in previous} <= kept:
        _drop_chunks(db, older, kept)
    # FTS5 writes its pending terms out as a segment (then merges segments) every
    # ``hashsize`` bytes: 1 MB by default, a tenth of indexing a 2,400-page crawl.
    db.execute("INSERT INTO chunks (chunks, rank) VALUES ('hashsize', ?)", (FTS_HASH_BYTES,))
    scope = f"s{stored.id}"
    db.executemany(
        "INSERT INTO chunks (title, headings, body, where_, scope, url, anchor, path, snapshot)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (
                title,
                " / ".join(path),
                text,
                _url_words(url),
                scope,
                url,
                anchor,
                _json_strings(path),
                stored.id,
            )
            for page in pages
            if page.url not in kept
            for url, title, path, anchor, text in _chunk_fields(chunker(page))
        ),
    )


def _chunk_fields(
    chunks: Sequence[Chunk] | bytes,
) -> Iterator[tuple[str, str, Sequence[str], str, str]]:
    """Each chunk's (url, title, heading path, anchor, text). From ``chunks.jsonl`` lines
    (a JSON line holds no raw line break), one line at a time through a decoder made
    once, and no ``Chunk`` made: reading them back as objects was a fifth of recording a
    crawl of small pages. Streamed, so only one page's text is held (a page's lines can
    be megabytes)."""
    if not isinstance(chunks, bytes):
        yield from ((c.url, c.title, c.heading_path, c.anchor, c.text) for c in chunks)
        return
    text = chunks.decode("utf-8")
    del chunks  # the text alone is held from here
    start = 0
    while (end := text.find("\n", start)) >= 0:
        fields = _decode_line(text[start:end])
        start = end + 1
        yield (
            fields["url"],
            fields["title"],
            fields["heading_path"],
            fields["anchor"],
            fields["text"],
        )


_decode_line = json.JSONDecoder().decode


def _json_strings(strings: Sequence[str]) -> str:
    """``json.dumps(list(strings), ensure_ascii=False)``, without its per-call set-up
    (one per chunk)."""
    return "[" + ", ".join(map(encode_basestring, strings)) + "]"


def _same_chunking(db: sqlite3.Connection, stored: Snapshot) -> bool:
    """Were the (site, version)'s indexed chunks made by this chunking code? (Notes that
    they are, from now on.)"""
    key = f"chunking {stored.site} {stored.version}"
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, chunking_digest()))
    return row is not None and row[0] == chunking_digest()


def _unchanged(previous: list[PageState], states: list[PageState]) -> set[str]:
    """URLs whose title and markdown are what the ``previous`` snapshot had (once each:
    a URL listed twice is indexed again, as it always was)."""
    before = set(previous)
    counts: dict[str, int] = {}
    for state in states:
        counts[state.url] = counts.get(state.url, 0) + 1
    return {s.url for s in states if s in before and counts[s.url] == 1}


def _drop_chunks(db: sqlite3.Connection, older: list[int], kept: set[str]) -> None:
    """Drop the chunks of the older snapshots but those of the ``kept`` URLs (one scan,
    then deletes by rowid)."""
    if not older:
        return
    marks = ", ".join("?" * len(older))
    rows = db.execute(
        f"SELECT rowid, url FROM chunks WHERE snapshot IN ({marks})", older
    ).fetchall()
    db.executemany(
        "DELETE FROM chunks WHERE rowid = ?", [(rowid,) for rowid, url in rows if url not in kept]
    )


@functools.lru_cache(maxsize=1024)  # a page's chunks share its URL
def _url_words(url: str) -> str:
    """The URL's path as words ("/user/advanced/" → "user advanced")."""
    path = url.split("://", 1)[-1].partition("/")[2]
    return " ".join(re.findall(r"[A-Za-z0-9]+", path.rsplit(".", 1)[0] if "." in path else path))


def _states(db: sqlite3.Connection, snapshot: int) -> list[PageState]:
    rows = db.execute(
        "SELECT url, title, hash FROM pages WHERE snapshot = ? ORDER BY position", (snapshot,)
    ).fetchall()
    return [PageState(*row) for row in rows]


def _markdown(db: sqlite3.Connection, snapshot: int, url: str) -> str:
    row = db.execute(
        "SELECT t.markdown FROM pages p JOIN texts t ON t.hash = p.hash"
        " WHERE p.snapshot = ? AND p.url = ?",
        (snapshot, url),
    ).fetchone()
    return row[0] if row else ""


def _url_variants(url: str) -> tuple[str, str, str]:
    """The URL as given, without its fragment, and with/without a trailing slash."""
    bare = url.split("#", 1)[0]
    other = bare[:-1] if bare.endswith("/") else bare + "/"
    return url, bare, other
