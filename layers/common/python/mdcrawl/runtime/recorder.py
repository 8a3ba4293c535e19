"""A local crawl's docs-library record, made beside its assembly in a process of its own.

After the crawl two serial phases remained: finalize (assembly of the outputs) and the
record of the crawl into the docs library (``library/record.py``). The record needs only
the final page records (finalize has them before it assembles: ``records_ready``) and
what is on disk (each page's markdown and chunk lines in the blob store), so a process
forked by the conversion workers' forkserver (``workers.py``: it costs a fork; it
imports the library code once) records the crawl while this one assembles. It takes one
core's share of the assembly (``cores``): on two cores the assembly renders its pages
in this process alone, and the record takes the other. Not a thread: one beside the
assembly cost it ~0.8 s more CPU on Rust core (the GIL) and 54 MB more memory. Not a
fork of this process either: a fork is counted whole (the crawl's heap) in the summed
resident size; the forkserver's is ~50 MB, and the record holds its pages' markdown as
UTF-8 (``store.EncodedPage``), so the tail's peak is below a renderer's.

A snapshot is recorded only for a crawl that completed. The process writes everything
in the library's transaction and commits only once this process says the job completed
(``finish``, after finalize's completed transition is committed), with the finished job
(its time names the snapshot). Anything else rolls it back: the job did not complete
(``abandon``: the process is terminated; SQLite never saw a commit), Ctrl-C (the
process ignores SIGINT; this one abandons it), or this process killed (the pipe closes:
the recorder rolls back and leaves). A resumed crawl records as any other.

Where the forkserver is not running (a cached re-crawl converts nothing and starts no
worker), on one core, or if the process fails or dies before answering, the crawl is
recorded in this process afterwards, as before (unless the library already holds the
job: a process that died between its commit and its answer). While it waits, the
process holds the library's write lock: another crawl's record waits for it (SQLite's
30 s, then it records in its own process); searches read on (WAL).
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from .. import stored
from ..adapters.local.blobs import FileBlobStore
from ..adapters.local.chunks import ChunkCache
from ..adapters.local.stores import BLOBS_DIR
from ..library import Library
from ..library.record import Recorded, kept_chunks, record_crawl
from ..models import Job, JobStatus, PageRecord
from . import workers

log = logging.getLogger(__name__)

# What the process sends: PREPARED once everything is written and it waits for the
# parent's word (a process holding its transaction open; what the tests watch for), then
# RECORDED with the ``Recorded``, or FAILED with the error.
PREPARED, RECORDED, FAILED = "prepared", "recorded", "failed"


class NotCompleted(Exception):
    """The crawl did not complete: the record is rolled back."""


class LibraryRecorder:
    """The record of one crawl: ``start`` it with the final records (finalize's
    ``records_ready``), then ``finish`` it with the finished job, or ``abandon`` it."""

    def __init__(self, root: Path, out_dir: Path, label: str | None) -> None:
        self._root, self._out_dir, self._label = root, out_dir, label
        self._process: Any = None
        self._pipe: Connection | None = None
        self.records: list[PageRecord] | None = None  # as finalize gave them

    @property
    def cores(self) -> int:
        """Cores the record takes while the outputs are assembled (0 or 1)."""
        return 1 if self._process is not None else 0

    def start(self, job: Job, records: list[PageRecord]) -> None:
        """Record ``records`` in a process of the workers' forkserver, if it runs and
        there is a core to spare (else they are kept for ``finish``'s record here)."""
        self.records = records
        if self._process is not None or not _spare_core() or not workers.forkserver_running():
            return
        try:
            here, there = workers.recorder_context().Pipe()
            process = workers.recorder_context().Process(
                target=record_there,
                args=(str(self._root), job, records, str(self._out_dir), self._label, there),
                name="mdcrawl-recorder",
                daemon=True,  # never outlives this process (multiprocessing's exit)
            )
            process.start()
        except Exception as exc:  # noqa: BLE001 - recorded here afterwards instead
            log.warning("the library record could not start beside the assembly: %r", exc)
            return
        there.close()
        self._process, self._pipe = process, here

    def finish(self, job: Job, record_here: Callable[[], Recorded | None]) -> Recorded | None:
        """The crawl ended as ``job``: a completed one is committed by the process (or
        recorded by ``record_here``, which may read ``records``, if no process could);
        any other is dropped."""
        if job.status is not JobStatus.COMPLETED:
            self.abandon()
            return None
        if self._process is None:
            return record_here()
        answer = self._answer(job)
        self.abandon()  # it has left after answering: this only reaps it
        if answer is not None:
            return answer
        if Library(self._root).holds_job(job.job_id):  # committed, then died: not twice
            log.warning("the library holds the crawl, but its record's answer was lost")
            return None
        return record_here()

    def _answer(self, job: Job) -> Recorded | None:
        assert self._pipe is not None
        try:
            self._pipe.send(job)
            kind, value = self._pipe.recv()
            while kind == PREPARED:
                kind, value = self._pipe.recv()
        except (EOFError, OSError):
            log.warning("the library record's process died: recording here")
            return None
        if kind != RECORDED:
            log.warning("the library record failed beside the assembly (%s): again here", value)
            return None
        recorded: Recorded = value
        return recorded

    def abandon(self) -> None:
        """Stop the process (if running) without a commit: nothing of it is recorded."""
        process, pipe = self._process, self._pipe
        self._process = self._pipe = None
        if pipe is not None:
            pipe.close()
        if process is not None:
            if process.is_alive():
                process.terminate()
            process.join()


def _spare_core() -> bool:
    return (os.cpu_count() or 1) > 1


def record_there(
    root: str,
    job: Job,
    records: list[PageRecord],
    out_dir: str,
    label: str | None,
    parent: Connection,
) -> None:
    """The recorder process: prepare the record, commit it once the parent answers the
    job completed (``LibraryRecorder.finish``), send back what was recorded."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    blobs = FileBlobStore(Path(root) / BLOBS_DIR)
    read = lambda key: stored.read_markdown(blobs, key)  # noqa: E731
    chunker, version = kept_chunks(ChunkCache(blobs)), blobs.version
    library = Library(Path(root))
    try:
        recorded = record_crawl(
            library, job, records, read, Path(out_dir), label, chunker, version,
            completed=lambda: _completed(parent),
        )  # fmt: skip
    except NotCompleted:
        return
    except Exception as exc:  # noqa: BLE001 - the parent records again, or says why
        parent.send((FAILED, repr(exc)))
        return
    finally:
        library.close()
    parent.send((RECORDED, recorded))


def _completed(parent: Connection) -> Job:
    """The finished job, once the parent sends it; NotCompleted if it never will."""
    try:
        parent.send((PREPARED, None))
        job: Job = parent.recv()
    except (EOFError, OSError):  # the parent has gone (killed) or abandoned the record
        raise NotCompleted from None
    return job
