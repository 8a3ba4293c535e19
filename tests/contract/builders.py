"""Small builders of the records the contract suites store."""

from __future__ import annotations

import hashlib

from mdcrawl.models import CacheEntry, CrawlOptions, FrontierItem, Job, PageRecord, PageStatus


def url_hash(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()[:32]


def item(path: str, depth: int = 1, order: int = 0) -> FrontierItem:
    url = f"https://docs.example.com/{path}"
    return FrontierItem(url=url, url_hash=url_hash(url), depth=depth, order=order)


def job(job_id: str = "job-1", owner: str = "alice", created_at: float = 1000.0) -> Job:
    return Job(
        job_id=job_id,
        url="https://docs.example.com/",
        options=CrawlOptions(max_pages=50, include=("/guide/*",), exclude=("/old/*",)),
        owner=owner,
        created_at=created_at,
        result_keys={"docs": "jobs/job-1/docs.md"},
    )


def page(job_id: str, path: str, order: int, title: str = "A page") -> PageRecord:
    url = f"https://docs.example.com/{path}"
    return PageRecord(
        job_id=job_id,
        url=url,
        url_hash=url_hash(url),
        status=PageStatus.OK,
        order=order,
        title=title,
        words=120,
        markdown_key=f"jobs/{job_id}/pages/{path}.md",
        nav=("https://docs.example.com/a", "https://docs.example.com/b"),
        description="What this page is about.",
        sitemap_rank=3,
        content_hash="c0ffee",
    )


def cache_entry(path: str = "guide", status: int = 200, etag: str | None = '"v1"') -> CacheEntry:
    url = f"https://docs.example.com/{path}"
    return CacheEntry(
        url_hash=url_hash(url),
        url=url,
        final_url=url + "/",
        status=status,
        content_type="text/html",
        fetched_at=1000.0,
        fresh_until=87400.0,
        content_hash="ab" * 32,
        etag=etag,
        last_modified="Wed, 21 Oct 2015 07:28:00 GMT",
        links=("https://docs.example.com/a", "https://docs.example.com/b"),
        title="Guide",
    )
