"""Recording a finished crawl into the library, and ``changes.md`` beside its outputs."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlunsplit

from ..adapters.local.chunks import ChunkCache
from ..agent_outputs import page_markdown
from ..models import Job, PageRecord, PageStatus
from ..order import reading_order
from ..pipeline.finalize import without_duplicates
from ..stored import is_cache_document
from ..tokens import estimate_tokens
from ..urls import scope_for
from ..versions import version_info, version_label
from .changes import Changes, changes_md
from .store import (
    Chunker,
    EncodedPage,
    KnownPage,
    Library,
    Page,
    Snapshot,
    TextMark,
    chunked,
)

CHANGES = "changes.md"


@dataclass(frozen=True)
class Recorded:
    snapshot: Snapshot
    changes: Changes


def site_of(start_url: str) -> str:
    """The library's name for the site a crawl of ``start_url`` covers: host and scope
    folder, without version and locale segments ("requests.readthedocs.io/")."""
    return version_info(scope_folder(start_url)).site


def scope_folder(start_url: str) -> str:
    """The URL of the folder a crawl of ``start_url`` stays in."""
    scope = scope_for(start_url)
    return urlunsplit((scope.scheme, scope.host, scope.path_prefix, "", ""))


def _mark(record: PageRecord, version: Callable[[str], object]) -> TextMark | None:
    """Where the page's text comes from, when that is a markdown cache document (named
    by its page's body, base URL and converter version; its version says it was not
    written again): a job's own blobs, such as native twins, are read each time."""
    key = record.markdown_key or ""
    if not is_cache_document(key):
        return None
    return key, json.dumps(version(key)), record.title or record.url


def _page(
    record: PageRecord,
    mark: TextMark | None,
    known: dict[tuple[str, str], tuple[str, int]],
    read_markdown: Callable[[str], str],
) -> EncodedPage | KnownPage:
    title = record.title or record.url
    text = lambda: page_markdown(record, read_markdown(record.markdown_key or ""))  # noqa: E731
    found = known.get((mark[0], mark[2])) if mark is not None else None
    if found is None:
        markdown = text()
        return EncodedPage(record.url, title, markdown.encode(), estimate_tokens(markdown))
    return KnownPage(record.url, title, found[0], found[1], text)


def kept_chunks(cache: ChunkCache) -> Chunker:
    """A page's chunks as a local crawl's pool workers kept them: their ``chunks.jsonl``
    lines, which the library reads in one go (no ``Chunk`` made per chunk)."""
    return lambda page: cache.lines(page.url, page.title, _utf8(page))


def _utf8(page: Page) -> str | bytes:
    """The page's markdown, as UTF-8 if it is held so (not decoded to be encoded again)."""
    return page.data if isinstance(page, EncodedPage) else page.markdown


def record_crawl(
    library: Library,
    job: Job,
    records: Sequence[PageRecord],
    read_markdown: Callable[[str], str],
    out_dir: Path | None,
    label: str | None = None,
    chunker: Chunker = chunked,
    version: Callable[[str], object] | None = None,
    completed: Callable[[], Job] | None = None,
) -> Recorded:
    """Store the job's ok pages (reading order) as a snapshot; write ``changes.md`` into
    ``out_dir`` when one is given. ``chunker`` gives a page's chunks (locally: the ones
    its pool worker made). ``version`` gives a blob's version (locally: size and mtime):
    a page read from a markdown cache document the library has recorded before, in the
    same version, is recorded without reading its markdown again.

    ``completed``, for a crawl whose outputs are still being written (``records`` are
    final already): everything is written in the library's transaction, which commits
    once ``completed()`` answers the job as it finished; if it raises (the crawl did not
    complete), nothing is recorded. The snapshot takes the finished job's time; if that
    changes its version label (a date, past midnight), the crawl is recorded again."""
    kept = [r for r in without_duplicates(list(records)) if r.status is PageStatus.OK]
    ordered = reading_order(kept, job.url)
    marks = [_mark(r, version) for r in ordered] if version else [None] * len(ordered)
    known = library.known([m for m in marks if m is not None])
    pages = [_page(r, m, known, read_markdown) for r, m in zip(ordered, marks, strict=True)]
    snapshot = _snapshot(job, label, out_dir, time.time() if completed else None)
    settle = None if completed is None else _settle_on(completed, label, out_dir)
    try:
        stored, changes = library.record(snapshot, pages, chunker, marks, settle)
    except _Relabelled as finished:  # rolled back: the crawl ended on the next day
        del pages  # read again: one copy of the pages held at a time
        job, read = finished.job, read_markdown
        return record_crawl(library, job, records, read, out_dir, label, chunker, version)
    if out_dir is not None:
        (out_dir / CHANGES).write_text(changes_md(changes), encoding="utf-8")
    return Recorded(stored, changes)


def _snapshot(job: Job, label: str | None, out_dir: Path | None, now: float | None) -> Snapshot:
    """The job's snapshot (its id given by the library). A job still finishing (no
    ``finished_at`` yet) takes ``now``, the nearest to its end there is."""
    crawled_at = job.finished_at or now or job.started_at or job.created_at
    return Snapshot(
        0,
        site_of(job.url),
        version_label(scope_folder(job.url), label, crawled_at),
        job.url,
        job.job_id,
        crawled_at,
        0,
        0,
        str(out_dir or ""),
    )


class _Relabelled(Exception):
    """The finished job's time gives its snapshot another version label."""

    def __init__(self, job: Job) -> None:
        super().__init__(job.job_id)
        self.job = job


def _settle_on(
    completed: Callable[[], Job], label: str | None, out_dir: Path | None
) -> Callable[[Snapshot], Snapshot]:
    def settle(written: Snapshot) -> Snapshot:
        finished = completed()
        final = _snapshot(finished, label, out_dir, None)
        if final.version != written.version:
            raise _Relabelled(finished)
        return final

    return settle

