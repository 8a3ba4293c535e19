"""Recording a finished crawl into the library, and ``changes.md`` beside its outputs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlunsplit

from ..adapters.local.chunks import ChunkCache
from ..agent_outputs import page_markdown
from ..models import Job, PageRecord, PageStatus
from ..order import reading_order
from ..pipeline.finalize import without_duplicates
from ..urls import scope_for
from ..versions import version_info, version_label
from .changes import Changes, changes_md
from .store import Chunker, Library, LibraryPage, Snapshot, chunked

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


def kept_chunks(cache: ChunkCache) -> Chunker:
    """A page's chunks as a local crawl's pool workers kept them: their ``chunks.jsonl``
    lines, which the library reads in one go (no ``Chunk`` made per chunk)."""
    return lambda page: cache.lines(page.url, page.title, page.markdown)


def record_crawl(
    library: Library,
    job: Job,
    records: Sequence[PageRecord],
    read_markdown: Callable[[str], str],
    out_dir: Path | None,
    label: str | None = None,
    chunker: Chunker = chunked,
) -> Recorded:
    """Store the job's ok pages (reading order) as a snapshot; write ``changes.md`` into
    ``out_dir`` when one is given. ``chunker`` gives a page's chunks (locally: the ones
    its pool worker made)."""
    kept = [r for r in without_duplicates(list(records)) if r.status is PageStatus.OK]
    pages = [
        LibraryPage(r.url, r.title or r.url, page_markdown(r, read_markdown(r.markdown_key or "")))
        for r in reading_order(kept, job.url)
    ]
    crawled_at = job.finished_at or job.started_at or job.created_at
    snapshot = Snapshot(
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
    stored, changes = library.record(snapshot, pages, chunker)
    if out_dir is not None:
        (out_dir / CHANGES).write_text(changes_md(changes), encoding="utf-8")
    return Recorded(stored, changes)

