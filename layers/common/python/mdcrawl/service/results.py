"""Where a completed job's results live, and the zip of its pages.

The finalizer writes ``docs.md``, ``llms.txt`` and ``manifest.jsonl`` (recorded in
``Job.result_keys``). The zip of the per-page files is built on first request, here,
streamed through ``BlobStore.writer`` one page at a time (memory stays flat) into
``jobs/{id}/pages.zip``; later requests reuse it. A finalizer may call
``build_pages_zip`` eagerly instead, so that the first download is not the slow one.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass

from ..models import Job, PageStatus
from ..names import job_key
from ..parts import PARTS_INDEX, part_name
from ..ports import BlobStore, PageStore

PAGES_ZIP = "pages.zip"
PARTS_ZIP = "parts.zip"


# The content type of every output, by suffix: S3 objects (runtime/aws.py) and serve's
# downloads (serve/app.py) are typed from this one table.
CONTENT_TYPES = {
    ".md": "text/markdown; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".jsonl": "application/x-ndjson",
    ".zip": "application/zip",
}


def content_type(name: str) -> str:
    suffix = name[name.rfind(".") :] if "." in name else ""
    return CONTENT_TYPES.get(suffix, "application/octet-stream")


@dataclass(frozen=True)
class ResultFile:
    name: str  # file name under jobs/{id}/, also the download's name

    @property
    def content_type(self) -> str:
        return content_type(self.name)


RESULT_FILES: dict[str, ResultFile] = {
    "markdown": ResultFile("docs.md"),
    "llms": ResultFile("llms.txt"),
    "manifest": ResultFile("manifest.jsonl"),
    "pages": ResultFile(PAGES_ZIP),
    # written by agent_outputs.py beside docs.md: the full text, and the search chunks
    "llms_full": ResultFile("llms-full.txt"),
    "chunks": ResultFile("chunks.jsonl"),
    "parts": ResultFile(PARTS_ZIP),  # with max_tokens: docs-001.md…
}


def result_key(job: Job, fmt: str) -> str:
    """The blob key of one result: as the finalizer recorded it, else the standard name."""
    file = RESULT_FILES[fmt]
    keys = job.result_keys
    return keys.get(fmt) or keys.get(file.name) or job_key(job.job_id, file.name)


def build_pages_zip(job_id: str, pages: PageStore, blobs: BlobStore) -> str:
    """Write the zip of the job's converted pages (in reading order); returns its key."""
    key = job_key(job_id, PAGES_ZIP)
    names: set[str] = set()
    with (
        blobs.writer(key, RESULT_FILES["pages"].content_type) as out,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive,
    ):
        for page in pages.list(job_id):
            if page.status != PageStatus.OK or not page.markdown_key:
                continue
            body = blobs.get(page.markdown_key)
            if body is not None:
                archive.writestr(_entry_name(job_id, page.markdown_key, page.order, names), body)
    return key


def _entry_name(job_id: str, markdown_key: str, order: int, taken: set[str]) -> str:
    """The page's path under ``jobs/{id}/pages/``, kept unique inside the archive."""
    prefix = job_key(job_id, "pages/")
    name = markdown_key.removeprefix(prefix) if markdown_key.startswith(prefix) else ""
    name = name or markdown_key.rsplit("/", 1)[-1]
    if name in taken:
        name = f"{order:05d}-{name}"
    taken.add(name)
    return name


def ensure_result(job: Job, fmt: str, pages: PageStore, blobs: BlobStore) -> str | None:
    """The key of an existing result blob, building the pages zip if needed; None if absent."""
    key = result_key(job, fmt)
    if blobs.exists(key):
        return key
    if fmt == "pages":
        return build_pages_zip(job.job_id, pages, blobs)
    if fmt == "parts" and blobs.exists(job_key(job.job_id, PARTS_INDEX)):
        return build_parts_zip(job.job_id, blobs)
    return None


def build_parts_zip(job_id: str, blobs: BlobStore) -> str:
    """The zip of a job's --max-tokens parts (docs-001.md… in order) and their index."""
    key = job_key(job_id, PARTS_ZIP)
    with (
        blobs.writer(key, RESULT_FILES["parts"].content_type) as out,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive,
    ):
        for name in (PARTS_INDEX, *_part_names(job_id, blobs)):
            archive.writestr(name, blobs.get(job_key(job_id, name)) or b"")
    return key


def _part_names(job_id: str, blobs: BlobStore) -> list[str]:
    names, index = [], 1
    while blobs.exists(job_key(job_id, part_name(index))):
        names.append(part_name(index))
        index += 1
    return names
