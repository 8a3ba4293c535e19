"""Page files written where the pages are rendered (``write_outputs(page_files=...)``, as
``mdcrawl crawl`` does): the output memo still knows every file, so an unchanged
re-crawl of the folder rewrites nothing but the manifest."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from mdcrawl.adapters.local.blobs import FileBlobStore
from mdcrawl.adapters.local.outputs import FileOutputMemo
from mdcrawl.assemble import AssembledResult, write_outputs
from mdcrawl.models import CrawlOptions, Job, PageRecord, PageStatus

ROOT = "https://docs.example.org/docs/"
PAGES = ["# Docs\n\nSee [Setup](https://docs.example.org/docs/p1.html#setup).\n"] + [
    f"# Page {n}\n\n## Setup\n\nStep {n}.\n" for n in range(1, 5)
]


def _records(job_id: str) -> list[PageRecord]:
    return [
        PageRecord(
            job_id=job_id,
            url=ROOT + (f"p{n}.html" if n else ""),
            url_hash=f"h{n}",
            status=PageStatus.OK,
            order=n,
            title=f"Page {n}",
            words=3,
            markdown_key=f"jobs/{job_id}/pages/h{n}.md",
        )
        for n in range(len(PAGES))
    ]


def _assemble(blobs: FileBlobStore, out: Path, job_id: str) -> tuple[AssembledResult, bool]:
    job, records = Job(job_id=job_id, url=ROOT, options=CrawlOptions(), created_at=1.7e9), _records(job_id)
    for n, text in enumerate(PAGES):
        blobs.put(f"jobs/{job_id}/pages/h{n}.md", text.encode())
    memo = FileOutputMemo(blobs, out)
    reused = memo.reuse(job, records)
    if reused is not None:
        return reused, True

    @contextmanager
    def on_disk(name: str) -> Iterator[BinaryIO]:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        with (out / name).open("wb") as stream:
            yield stream

    seen: list[str] = []

    @contextmanager
    def through_the_memo(name: str) -> Iterator[BinaryIO]:
        seen.append(name)
        with memo.opener(on_disk)(name) as stream:
            yield stream

    read = lambda key: (blobs.get(key) or b"").decode()  # noqa: E731
    result = write_outputs(job, records, read, through_the_memo, None, None, None, on_disk)
    assert not any(name.startswith("pages/") for name in seen)  # none went through it
    memo.remember(job, records, result)
    return result, False


def test_page_files_written_apart_are_known_to_the_output_memo(tmp_path: Path) -> None:
    blobs, out = FileBlobStore(tmp_path / "cache"), tmp_path / "out"
    first, reused = _assemble(blobs, out, "job-1")
    assert not reused
    pages = sorted((out / "pages").glob("*.md"))
    assert len(pages) == len(PAGES)
    stamps = [p.stat().st_mtime_ns for p in pages]

    again, reused = _assemble(blobs, out, "job-2")  # the same pages crawled again
    assert reused and again.pages == first.pages
    assert [p.stat().st_mtime_ns for p in pages] == stamps  # not written again

    pages[1].unlink()  # a page file gone: the folder is assembled in full
    _, reused = _assemble(blobs, out, "job-3")
    assert not reused and pages[1].exists()
