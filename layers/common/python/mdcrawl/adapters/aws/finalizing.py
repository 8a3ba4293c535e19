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

from ...names import job_key
from ...pipeline.finalize import FinalizeDeps
from ...pipeline.finalize_task import FinalizeIO
from ...ports import PageStore
from ...service.results import content_type
from .packing import PagePacker
from .prefetch import PrefetchedBlobs


@contextlib.contextmanager
def s3_finalize_session(job_id: str, deps: FinalizeDeps) -> Iterator[FinalizeIO]:
    blobs = PrefetchedBlobs(deps.blobs, lambda: markdown_keys(job_id, deps.pages))
    packer = PagePacker(blobs, job_id, lambda name: open_output(blobs, job_id, name))
    try:
        yield FinalizeIO(replace(deps, blobs=blobs), packer.open_output, packer.output_key)
        packer.finish()
    except BaseException as exc:
        packer.abort(exc)
        raise
    finally:
        blobs.close()


def markdown_keys(job_id: str, pages: PageStore) -> list[str]:
    """The markdown the assembly will read, roughly in its reading order."""
    records = sorted(pages.list(job_id), key=lambda r: r.order)
    return [r.markdown_key for r in records if r.markdown_key]


def open_output(blobs: Any, job_id: str, name: str) -> AbstractContextManager[BinaryIO]:
    return blobs.writer(job_key(job_id, name), content_type(name))  # type: ignore[no-any-return]
