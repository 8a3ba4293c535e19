"""Finalize's per-page files packed into one object: assembly writes ``pages/NNNN-slug.md``
for every page, which on S3 is one PUT each ($0.005 per 1,000: more than all of a
cached page's other costs together). ``PagePacker`` hands assembly the same
``open_output`` interface but writes those files as entries of ``jobs/{id}/pages.zip``,
streamed through one multipart upload (memory holds one page and one part); every
other output still goes to its own object.

The zip is the ``pages`` result (service/results.py serves an existing ``pages.zip``
as is), so the download holds the linked page files, built once here and never
inside the 29 s API function. It is finished as soon as assembly opens an output
that is not a page file after page files were written (``llms.txt`` follows the pages
in assembly), so it is complete before the job is marked completed; ``close`` finishes
it otherwise, or aborts it when assembly failed (nothing half-written is visible).
"""

from __future__ import annotations

import contextlib
import io
import zipfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any, BinaryIO

from ...names import job_key

PAGE_FILES = "pages/"
PAGES_ZIP = "pages.zip"
ZIP_TYPE = "application/zip"


class PagePacker:
    def __init__(
        self,
        blobs: Any,
        job_id: str,
        open_other: Callable[[str], AbstractContextManager[BinaryIO]],
    ) -> None:
        self._blobs, self._job_id, self._open_other = blobs, job_id, open_other
        self._exits: ExitStack | None = None
        self._archive: zipfile.ZipFile | None = None
        self._finished = False

    @property
    def key(self) -> str:
        return job_key(self._job_id, PAGES_ZIP)

    def output_key(self, name: str) -> str:
        """Where finalize's output ``name`` ends up (``result_keys``): the page folder's
        result is the zip."""
        return self.key if name == PAGE_FILES else job_key(self._job_id, name)

    def open_output(self, name: str) -> AbstractContextManager[BinaryIO]:
        if name.startswith(PAGE_FILES):
            return self._entry(name)
        if self._archive is not None:
            self.finish()
        return self._open_other(name)

    @contextmanager
    def _entry(self, name: str) -> Iterator[BinaryIO]:
        if self._finished:
            raise RuntimeError(f"{self.key} is already finished; {name} came too late")
        buffer = io.BytesIO()
        yield buffer
        self._opened().writestr(name, buffer.getvalue())

    def _opened(self) -> zipfile.ZipFile:
        if self._archive is None:
            self._exits = ExitStack()
            out = self._exits.enter_context(self._blobs.writer(self.key, ZIP_TYPE))
            self._archive = zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED)
        return self._archive

    def finish(self) -> None:
        """Write the zip's directory and complete the upload."""
        if self._archive is None or self._exits is None:
            return
        self._archive.close()
        self._archive, self._finished = None, True
        self._exits.close()

    def abort(self, error: BaseException) -> None:
        """Abort the upload (the writer aborts when its block ends with an exception)."""
        if self._exits is None or self._finished:
            return
        self._archive, self._finished = None, True
        with contextlib.suppress(BaseException):  # the writer re-raises ``error``: ours
            self._exits.__exit__(type(error), error, error.__traceback__)
