"""One finalize run on S3 (``finalize_task.FinalizeSession``): the pages' markdown prefetched
concurrently in reading order (``prefetch.py``), page files packed into ``pages.zip``
(``packing.py``: one upload, not one PUT each) and every other output streamed to its
own object through a multipart upload. Outputs become visible when the run ends
normally; a run that raises aborts what it was writing (nothing half-written shows)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any, BinaryIO

from ...models import PageRecord
from ...names import job_key
from ...pipeline.finalize import FinalizeDeps
from ...pipeline.finalize_task import FinalizeIO
from ...ports import PageStore
from ...service.results import content_type
from .packing import PagePacker
from .prefetch import PrefetchedBlobs


@contextlib.contextmanager
def s3_finalize_session(job_id: str, deps: FinalizeDeps) -> Iterator[FinalizeIO]:
    pages = ListedOnce(deps.pages)
    blobs = PrefetchedBlobs(deps.blobs, lambda: markdown_keys(job_id, pages))
    packer = PagePacker(blobs, job_id, lambda name: open_output(blobs, job_id, name))
    try:
        deps = replace(deps, blobs=blobs, pages=pages)
        yield FinalizeIO(deps, packer.open_output, packer.output_key)
        packer.finish()
    except BaseException as exc:
        packer.abort(exc)
        raise
    finally:
        blobs.close()


class ListedOnce:
    """A PageStore whose ``list`` of a job is read once per finalize run: finalize
    counts the records it is owed, then assembles them, then prefetches their markdown,
    three reads of every record (each a consistent Query over the job's partition) where
    one does. Nothing writes a record in between (a finalize run only reads them; a
    late processor's record is seen by the next run, which the count makes wait for)."""

    def __init__(self, inner: PageStore) -> None:
        self._inner = inner
        self._listed: dict[str, list[PageRecord]] = {}

    def list(self, job_id: str) -> list[PageRecord]:
        if job_id not in self._listed:
            self._listed[job_id] = self._inner.list(job_id)
        return list(self._listed[job_id])

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def markdown_keys(job_id: str, pages: PageStore) -> list[str]:
    """The markdown the assembly will read, roughly in its reading order."""
    records = sorted(pages.list(job_id), key=lambda r: r.order)
    return [r.markdown_key for r in records if r.markdown_key]


def open_output(blobs: Any, job_id: str, name: str) -> AbstractContextManager[BinaryIO]:
    return blobs.writer(job_key(job_id, name), content_type(name))  # type: ignore[no-any-return]
