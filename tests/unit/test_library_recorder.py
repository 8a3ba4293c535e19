"""The library's record of a local crawl made beside its assembly (``runtime/recorder.py``):
committed only once the job completed, with the finished job's time; nothing recorded
for a crawl that did not complete, an abandoned record or a parent that went away; a
recorder that died replaced by a record in the crawl's own process, never twice."""

from __future__ import annotations

import calendar
import multiprocessing
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from mdcrawl.adapters.local.blobs import FileBlobStore
from mdcrawl.adapters.local.stores import BLOBS_DIR
from mdcrawl.library import Library, LibraryPage, Snapshot
from mdcrawl.library.record import Recorded, record_crawl
from mdcrawl.models import CrawlOptions, Job, JobStatus, PageRecord, PageStatus
from mdcrawl.runtime import recorder as recorder_module
from mdcrawl.runtime import workers
from mdcrawl.runtime.recorder import LibraryRecorder, record_there

ROOT = "https://docs.example.org/guide/"
TEXTS = {
    "index": "# Guide\n\nWhat the guide covers.\n",
    "timeouts": "# Timeouts\n\n## Read timeout\n\nThe read timeout counts seconds between bytes.\n",
    "proxies": "# Proxies\n\nSet `HTTPS_PROXY` in the environment.\n",
}
DAY = 86_400.0
STARTED = calendar.timegm((2026, 3, 1, 12, 0, 0))
TABLES = ("snapshots", "pages", "texts", "known_texts", "chunks")


def _job(status: JobStatus = JobStatus.FINALIZING, finished_at: float | None = None) -> Job:
    return Job(
        job_id="job-1",
        url=ROOT,
        options=CrawlOptions(),
        status=status,
        created_at=STARTED,
        started_at=STARTED,
        finished_at=finished_at,
    )


def _site(root: Path) -> list[PageRecord]:
    """The pages' markdown in the cache folder's blob store, and their records."""
    blobs = FileBlobStore(root / BLOBS_DIR)
    records = []
    for order, (name, text) in enumerate(TEXTS.items()):
        key = f"jobs/job-1/pages/{name}.md"
        blobs.put(key, text.encode(), "text/markdown")
        url = ROOT + ("" if name == "index" else f"{name}.html")
        title = text.split("\n", 1)[0][2:]
        records.append(
            PageRecord("job-1", url, f"h{order}", PageStatus.OK, order, title, 5, key)
        )
    return records


def _contents(root: Path) -> dict[str, list[tuple]]:
    """What the library holds, the snapshots' ids and times aside."""
    path = root / "library.sqlite3"
    if not path.exists():
        return dict.fromkeys(TABLES, [])
    with sqlite3.connect(path) as db:
        return {
            "snapshots": db.execute(
                "SELECT site, version, url, job_id, pages, tokens, out_dir FROM snapshots"
            ).fetchall(),
            "pages": db.execute("SELECT * FROM pages ORDER BY position").fetchall(),
            "texts": db.execute("SELECT * FROM texts ORDER BY hash").fetchall(),
            "known_texts": db.execute("SELECT * FROM known_texts").fetchall(),
            "chunks": db.execute("SELECT * FROM chunks ORDER BY rowid").fetchall(),
        }


def _recorded_here(
    root: Path, job: Job, records: list[PageRecord], out_dir: Path | None = None
) -> Recorded:
    blobs = FileBlobStore(root / BLOBS_DIR)
    read = lambda key: blobs.get(key).decode()  # noqa: E731
    return record_crawl(Library(root), job, records, read, out_dir, version=blobs.version)


# --- the library: a record's transaction commits only once it is settled --------------


def _snapshot() -> Snapshot:
    return Snapshot(0, "docs.example.org/guide/", "v1", ROOT, "job-1", STARTED, 0, 0, "")


PAGES = [LibraryPage(ROOT, "Guide", TEXTS["index"])]


def test_a_record_whose_settle_raises_leaves_nothing(tmp_path: Path) -> None:
    library = Library(tmp_path)

    def not_completed(written: Snapshot) -> Snapshot:
        assert _contents(tmp_path)["snapshots"] == []  # nothing committed while it waits
        raise RuntimeError("the crawl did not complete")

    with pytest.raises(RuntimeError):
        library.record(_snapshot(), PAGES, settle=not_completed)
    assert _contents(tmp_path) == dict.fromkeys(TABLES, [])
    stored, _ = library.record(_snapshot(), PAGES)  # the library goes on as before
    assert stored.pages == 1 and library.search("guide covers")


def test_a_settled_record_takes_the_time_it_was_settled_with(tmp_path: Path) -> None:
    library = Library(tmp_path)
    finished = lambda written: replace(written, crawled_at=STARTED + 60)  # noqa: E731
    stored, _ = library.record(_snapshot(), PAGES, settle=finished)
    assert stored.crawled_at == STARTED + 60
    assert [s.crawled_at for s in library.snapshots()] == [STARTED + 60]


def test_a_crawl_finishing_on_another_day_is_recorded_under_that_day(tmp_path: Path) -> None:
    records = _site(tmp_path)
    finished = _job(JobStatus.COMPLETED, finished_at=STARTED + 3 * DAY)
    recorded = record_crawl(
        Library(tmp_path), _job(), records, _read(tmp_path), None,
        completed=lambda: finished,
    )  # fmt: skip
    assert recorded.snapshot.version == "2026-03-04"
    assert recorded.snapshot.crawled_at == finished.finished_at
    assert [(s.version, s.pages) for s in Library(tmp_path).snapshots()] == [("2026-03-04", 3)]


def _read(root: Path):  # noqa: ANN202
    blobs = FileBlobStore(root / BLOBS_DIR)
    return lambda key: blobs.get(key).decode()


# --- the recorder process ---------------------------------------------------------------


@pytest.fixture(scope="module")
def forkserver() -> None:
    workers.start_workers().result(timeout=120)


def _finished() -> Job:
    return _job(JobStatus.COMPLETED, finished_at=STARTED + 30)


def _never_here() -> Recorded:
    raise AssertionError("recorded in the crawl's process")


def test_recorded_beside_the_assembly_as_it_is_recorded_here(
    tmp_path: Path, forkserver: None
) -> None:
    records = _site(tmp_path / "beside")
    out = tmp_path / "out"
    out.mkdir()
    recorder = LibraryRecorder(tmp_path / "beside", out, None)
    recorder.start(_job(), records)
    assert recorder.cores == 1
    recorded = recorder.finish(_finished(), _never_here)
    assert recorded is not None and recorded.snapshot.crawled_at == STARTED + 30
    assert (out / "changes.md").exists()
    (tmp_path / "beside").rename(tmp_path / "before")  # the same paths, recorded here
    here = _recorded_here(tmp_path / "beside", _finished(), _site(tmp_path / "beside"), out)
    assert recorded.snapshot == here.snapshot and recorded.changes == here.changes
    assert _contents(tmp_path / "before") == _contents(tmp_path / "beside")
    assert recorder.cores == 0


def test_a_crawl_that_did_not_complete_records_nothing(tmp_path: Path, forkserver: None) -> None:
    recorder = LibraryRecorder(tmp_path, tmp_path / "out", None)
    recorder.start(_job(), _site(tmp_path))
    failed = replace(_finished(), status=JobStatus.FAILED)
    assert recorder.finish(failed, _never_here) is None
    assert _contents(tmp_path) == dict.fromkeys(TABLES, [])


def test_an_abandoned_record_commits_nothing(tmp_path: Path, forkserver: None) -> None:
    recorder = LibraryRecorder(tmp_path, tmp_path / "out", None)
    recorder.start(_job(), _site(tmp_path))
    process = recorder._process
    recorder.abandon()  # Ctrl-C or a failure during the assembly
    assert process is not None and not process.is_alive()
    assert _contents(tmp_path) == dict.fromkeys(TABLES, [])
    recorder.abandon()  # twice: nothing left to stop


def test_a_recorder_whose_parent_went_away_rolls_back(tmp_path: Path) -> None:
    """The parent killed: the pipe closes, and the record prepared is not committed."""
    records = _site(tmp_path)
    parent, child = multiprocessing.Pipe()
    parent.close()
    record_there(str(tmp_path), _job(), records, str(tmp_path), None, child)
    assert _contents(tmp_path) == dict.fromkeys(TABLES, [])
    assert not (tmp_path / "changes.md").exists()


def test_a_recorder_that_died_is_replaced_by_a_record_here(
    tmp_path: Path, forkserver: None
) -> None:
    records = _site(tmp_path)
    recorder = LibraryRecorder(tmp_path, tmp_path / "out", None)
    recorder.start(_job(), records)
    recorder._process.kill()
    recorder._process.join()
    here = lambda: _recorded_here(tmp_path, _finished(), records)  # noqa: E731
    recorded = recorder.finish(_finished(), here)
    assert recorded is not None and [s.pages for s in Library(tmp_path).snapshots()] == [3]


def test_a_recorder_that_committed_and_died_is_not_recorded_twice(
    tmp_path: Path, forkserver: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _site(tmp_path)
    recorder = LibraryRecorder(tmp_path, tmp_path / "out", None)
    recorder.start(_job(), records)
    _recorded_here(tmp_path, _finished(), records)  # as if it had committed
    monkeypatch.setattr(recorder, "_answer", lambda job: None)  # ...and died then
    assert recorder.finish(_finished(), _never_here) is None
    assert len(Library(tmp_path).snapshots()) == 1


@pytest.mark.parametrize("lacking", ["forkserver", "spare core"])
def test_without_a_forkserver_or_a_spare_core_the_crawl_is_recorded_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lacking: str, forkserver: None
) -> None:
    if lacking == "forkserver":
        monkeypatch.setattr(recorder_module.workers, "forkserver_running", lambda: False)
    else:
        monkeypatch.setattr(recorder_module.os, "cpu_count", lambda: 1)
    recorder = LibraryRecorder(tmp_path, tmp_path / "out", None)
    records = _site(tmp_path)
    recorder.start(_job(), records)
    assert recorder.cores == 0  # the assembly keeps every core
    assert recorder.records == records  # for the record here, as finalize gave them
    assert recorder.finish(_finished(), lambda: "here") == "here"  # type: ignore[arg-type,return-value]
