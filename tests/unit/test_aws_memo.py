"""What a warm processor keeps: a job's options and its settled template, once found."""

from __future__ import annotations

from pathlib import Path

from mdcrawl.adapters.aws.memo import JobOptionsOnce, SettledTemplates
from mdcrawl.adapters.local import FileBlobStore
from mdcrawl.models import CrawlOptions, Job


class CountingBlobs(FileBlobStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads: list[str] = []

    def get(self, key: str) -> bytes | None:
        self.reads.append(key)
        return super().get(key)


def test_a_template_is_asked_until_it_exists_then_kept(tmp_path: Path) -> None:
    inner = CountingBlobs(tmp_path)
    blobs = SettledTemplates(inner, "template.json")
    key = "jobs/j1/template.json"
    assert blobs.get(key) is None and blobs.get(key) is None
    inner.put(key, b'{"t": 1}')
    assert [blobs.get(key) for _ in range(3)] == [b'{"t": 1}'] * 3
    assert inner.reads.count(key) == 3  # two misses, then one read kept
    inner.put("cache/markdown/x.json", b"1")
    blobs.get("cache/markdown/x.json")
    blobs.get("cache/markdown/x.json")
    assert inner.reads.count("cache/markdown/x.json") == 2  # other keys: never kept


class CountingJobs:
    def __init__(self) -> None:
        self.reads = 0
        self.job = Job("j1", "http://docs.test/", CrawlOptions(generator_rules=False))

    def get(self, job_id: str) -> Job | None:
        self.reads += 1
        return self.job if job_id == "j1" else None


def test_a_jobs_options_are_read_once() -> None:
    inner = CountingJobs()
    jobs = JobOptionsOnce(inner)
    assert all(not jobs.get("j1").options.generator_rules for _ in range(4))
    assert jobs.get("nope") is None and jobs.get("nope") is None
    assert inner.reads == 3
