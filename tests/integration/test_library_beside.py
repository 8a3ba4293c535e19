"""A local crawl's library record, made beside its assembly (``runtime/recorder.py``), end
to end: a crawl interrupted while its outputs are assembled leaves the library without it
(however far the record had gone), and the same command, resumed, records it once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mdcrawl.library import Library
from mdcrawl.models import CrawlOptions, Job
from mdcrawl.pipeline import finalize as finalize_module
from mdcrawl.runtime import local
from mdcrawl.runtime.local import LocalRun, run_crawl
from mdcrawl.runtime.recorder import PREPARED

from tests.support.server import serve_directory
from tests.support.sites import require_site


class Quiet:
    def update(self, job: Job) -> None:
        pass

    def close(self) -> None:
        pass


def _snapshots(cache: Path) -> list[tuple[str, int]]:
    path = cache / "library.sqlite3"
    if not path.exists():
        return []
    with sqlite3.connect(path) as db:
        return db.execute("SELECT job_id, pages FROM snapshots").fetchall()


def test_interrupted_while_assembling_records_nothing_then_resumed_records_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = require_site("requests")
    cache, out = tmp_path / "cache", tmp_path / "out"
    recorders: list[local.LibraryRecorder] = []

    class Watched(local.LibraryRecorder):
        def start(self, job: Job, records: list) -> None:  # type: ignore[type-arg]
            super().start(job, records)
            recorders.append(self)

    assemble = finalize_module._assemble

    def interrupted(*args: object, **kwargs: object) -> object:
        assert recorders and recorders[0].cores == 1  # the record runs beside
        pipe = recorders[0]._pipe
        assert pipe is not None and pipe.poll(60)  # it has written all, and waits
        assert pipe.recv() == (PREPARED, None)
        raise KeyboardInterrupt  # Ctrl-C while the outputs are assembled

    monkeypatch.setattr(local, "LibraryRecorder", Watched)
    monkeypatch.setattr(finalize_module, "_assemble", interrupted)
    with serve_directory(site.root) as server:
        run = LocalRun(server.url(site.start), CrawlOptions(), out, cache)
        with pytest.raises(KeyboardInterrupt):
            run_crawl(run, Quiet())
        assert _snapshots(cache) == []
        assert Library(cache).search("install requests") == []

        monkeypatch.setattr(finalize_module, "_assemble", assemble)
        result = run_crawl(run, Quiet())
    assert result.resumed and result.recorded is not None
    assert _snapshots(cache) == [(result.job.job_id, result.recorded.snapshot.pages)]
    assert result.recorded.snapshot.pages > 10
    assert (out / "changes.md").exists()
    assert Library(cache).search("install requests")
