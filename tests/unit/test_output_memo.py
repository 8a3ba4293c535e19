"""FileOutputMemo: an unchanged re-assembly of the same folder rewrites only the manifest;
any changed input or output file means an assembly in full."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

import pytest
from mdcrawl.adapters.local.blobs import FileBlobStore
from mdcrawl.adapters.local.outputs import FileOutputMemo
from mdcrawl.assemble import AssembledResult, write_outputs
from mdcrawl.models import CrawlOptions, Job, PageRecord, PageStatus
from mdcrawl.names import BlobPrefix

ROOT = "https://docs.example.org/docs/"
PAGES = {
    "index": "# Docs\n\nSee [Install](https://docs.example.org/docs/install.html#setup).\n",
    "install": "# Install\n\n## Setup\n\nRun it.\n",
}


def _job(job_id: str) -> Job:
    return Job(job_id=job_id, url=ROOT, options=CrawlOptions(), created_at=1.7e9)


def _records(job_id: str, from_cache: bool) -> list[PageRecord]:
    return [
        PageRecord(
            job_id=job_id,
            url=ROOT + ("" if name == "index" else f"{name}.html"),
            url_hash=f"h{order}",
            status=PageStatus.OK,
            order=order,
            title=name.title(),
            words=3,
            markdown_key=f"jobs/{job_id}/pages/h{order}.md",
            from_cache=from_cache,
        )
        for order, name in enumerate(PAGES)
    ]


@pytest.fixture
def blobs(tmp_path: Path) -> FileBlobStore:
    return FileBlobStore(tmp_path / "cache")


def _put_markdown(blobs: FileBlobStore, job_id: str) -> None:
    for order, text in enumerate(PAGES.values()):
        blobs.put(f"jobs/{job_id}/pages/h{order}.md", text.encode())


def _finalize_like(
    blobs: FileBlobStore, out: Path, job_id: str, from_cache: bool
) -> tuple[AssembledResult, bool]:
    """What finalize does with a memo: reuse, else write and remember. True if reused."""
    job, records = _job(job_id), _records(job_id, from_cache)
    memo = FileOutputMemo(blobs, out)
    reused = memo.reuse(job, records)
    if reused is not None:
        return reused, True

    @contextmanager
    def open_output(name: str) -> Iterator[BinaryIO]:
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as stream:
            yield stream

    read = lambda key: (blobs.get(key) or b"").decode()  # noqa: E731
    result = write_outputs(job, records, read, memo.opener(open_output))
    memo.remember(job, records, result)
    return result, False


def _manifest(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]


def test_an_unchanged_crawl_keeps_every_file_but_the_manifest(
    blobs: FileBlobStore, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    _put_markdown(blobs, "job-1")
    first, reused = _finalize_like(blobs, out, "job-1", from_cache=False)
    assert not reused
    docs = (out / "docs.md").stat().st_mtime_ns
    page = next((out / "pages").glob("*.md"))
    page_stat = page.stat().st_mtime_ns

    _put_markdown(blobs, "job-2")  # a re-crawl: another job, the same markdown
    again, reused = _finalize_like(blobs, out, "job-2", from_cache=True)
    assert reused
    assert replace(again, names=first.names) == first
    assert (out / "docs.md").stat().st_mtime_ns == docs
    assert page.stat().st_mtime_ns == page_stat
    assert [row["from_cache"] for row in _manifest(out)] == [True, True]


def test_the_patched_manifest_is_what_an_assembly_in_full_writes(
    blobs: FileBlobStore, tmp_path: Path
) -> None:
    _put_markdown(blobs, "job-1")
    _put_markdown(blobs, "job-2")
    _finalize_like(blobs, tmp_path / "a", "job-1", from_cache=False)
    _finalize_like(blobs, tmp_path / "a", "job-2", from_cache=True)
    _finalize_like(blobs, tmp_path / "b", "job-2", from_cache=True)  # another folder: in full
    for name in ("manifest.jsonl", "docs.md", "llms.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_changed_page_means_an_assembly_in_full(blobs: FileBlobStore, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _put_markdown(blobs, "job-1")
    _finalize_like(blobs, out, "job-1", from_cache=False)
    _put_markdown(blobs, "job-2")
    blobs.put("jobs/job-2/pages/h1.md", b"# Install\n\n## Setup\n\nRun it twice.\n")
    _, reused = _finalize_like(blobs, out, "job-2", from_cache=True)
    assert not reused
    assert "Run it twice." in (out / "docs.md").read_text()


def test_an_output_edited_or_added_since_means_an_assembly_in_full(
    blobs: FileBlobStore, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    _put_markdown(blobs, "job-1")
    _finalize_like(blobs, out, "job-1", from_cache=False)
    (out / "docs.md").write_text("edited by hand\n")
    _put_markdown(blobs, "job-2")
    _, reused = _finalize_like(blobs, out, "job-2", from_cache=True)
    assert not reused
    assert (out / "docs.md").read_text().startswith("# ")

    (out / "pages" / "9999-stray.md").write_text("left over\n")
    _, reused = _finalize_like(blobs, out, "job-2", from_cache=True)
    assert not reused
    assert not (out / "pages" / "9999-stray.md").exists()  # cleared before assembling


def test_a_cache_document_written_again_means_an_assembly_in_full(
    blobs: FileBlobStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache document stands for its bytes by key and version: unchanged, the folder is
    kept without reading it; written again, assembled in full."""
    monkeypatch.setattr(sys.modules[__name__], "_records", _cache_records_of(_records))
    out = tmp_path / "out"
    for record, text in zip(_records("job-1", False), PAGES.values(), strict=True):
        blobs.put(record.markdown_key or "", text.encode())
    _finalize_like(blobs, out, "job-1", from_cache=False)
    _, reused = _finalize_like(blobs, out, "job-2", from_cache=True)
    assert reused
    key = _records("job-2", True)[1].markdown_key or ""
    blobs.put(key, b"# Install\n\n## Setup\n\nRun it now.\n")  # the same key written again
    _, reused = _finalize_like(blobs, out, "job-3", from_cache=True)
    assert not reused
    assert "Run it now." in (out / "docs.md").read_text()


def _cache_records_of(make):  # noqa: ANN001, ANN202 - the module's own _records, wrapped
    def records(job_id: str, from_cache: bool) -> list[PageRecord]:
        return [
            replace(r, markdown_key=f"{BlobPrefix.CACHE_MARKDOWN}8/{r.url_hash}.json")
            for r in make(job_id, from_cache)
        ]

    return records
