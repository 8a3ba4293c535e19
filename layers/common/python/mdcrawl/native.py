"""Native markdown twins: a site that publishes each page's markdown source beside it
(``page.md`` next to ``page.html``, or ``page.html.md`` as the llms.txt proposal has it),
or answers the page's own URL with markdown when asked ``Accept: text/markdown``, gives a
faithful text without any conversion. With ``prefer_native`` the crawl fetches
the twin of every converted page and the outputs use it; the manifest says
``"native": "md_twin"`` for those pages.

Probing costs requests, so it is done only when asked, and only if the start page has a
twin (sites publish them for all pages or none; Node.js's API docs have 64 of 65).

- ``twin_candidates`` / ``clean_twin`` / ``looks_like_markdown``: pure.
- ``fetch_twins``: the local runtime's pass after the pages are converted; the twins go
  to blobs ``jobs/{id}/native/{url_hash}.md``.
- ``with_native_twins``: finalize swaps a page's markdown for its twin when one is stored.
- ``probe_site_files`` / ``site_file_records``: whether the scope folder publishes
  ``llms.txt`` / ``llms-full.txt`` (two more requests, also only with ``prefer_native``);
  finalize lists each one found in the manifest (status ``skipped``, reason
  ``native_source``, ``native`` its name).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol
from urllib.parse import urljoin, urlsplit, urlunsplit

from .errors import FetchError
from .models import FetchResult, Job, PageRecord, PageStatus
from .names import job_key
from .ports import BlobStore
from .rewrite import rewrite_links, segments
from .urls import scope_for, url_hash

log = logging.getLogger(__name__)
MD_TWIN = "md_twin"
SITE_FILES = ("llms.txt", "llms-full.txt")
NEGOTIATED = "text/markdown, text/x-markdown;q=0.9"  # Accept: for content negotiation
NATIVE_SOURCE = "native_source"
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown", "text/plain"})
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_BLANKS = re.compile(r"\n{3,}")
_REFDEF = re.compile(r"^( {0,3}\[[^\]\n]+\]:[ \t]*)(\S+)", re.M)
_PARALLEL = 8


class TextFetcher(Protocol):
    async def fetch_text(self, url: str, accept: str | None = None) -> FetchResult: ...


def twin_key(job_id: str, url_hash: str) -> str:
    return job_key(job_id, f"native/{url_hash}.md")


def twin_candidates(url: str) -> list[str]:
    """Where a page's markdown twin may live: ``x.html`` → ``x.md``, ``x.html.md``;
    ``dir/`` → ``dir/index.md``, ``dir/index.html.md``; ``x`` → ``x.md``."""
    parts = urlsplit(url)
    path = parts.path or "/"
    if path.endswith("/"):
        paths = [path + "index.md", path + "index.html.md"]
    elif re.search(r"\.html?$", path):
        paths = [re.sub(r"\.html?$", ".md", path), path + ".md"]
    else:
        paths = [path + ".md"]
    return [urlunsplit((parts.scheme, parts.netloc, p, "", "")) for p in paths]


def looks_like_markdown(result: FetchResult, negotiated: bool = False) -> bool:
    """A 200 with a markdown or plain text type (or a .md URL) that is not an HTML page
    (a soft 404 answers HTML with status 200). For the page's own URL asked for with
    ``Accept: text/markdown``, only a markdown type counts."""
    if result.status != 200 or not result.body.strip():
        return False
    kind = result.content_type
    if negotiated and kind not in ("text/markdown", "text/x-markdown"):
        return False
    if kind not in MARKDOWN_TYPES and not (
        kind in ("", "application/octet-stream") and result.final_url.endswith(".md")
    ):
        return False
    head = result.body[:512].lstrip().lower()
    return not head.startswith((b"<!doctype", b"<html"))


def clean_twin(markdown: str, twin_url: str, pages: set[str]) -> str:
    """The twin as a page's markdown: HTML comments (build metadata) dropped outside code,
    links made absolute, and a link to another page's twin pointed at that page."""
    text = "".join(
        piece if in_code else _BLANKS.sub("\n\n", _COMMENT.sub("", piece))
        for piece, in_code in segments(markdown)
    )

    def absolute(target: str) -> str | None:
        resolved = urljoin(twin_url, target)
        base, _, fragment = resolved.partition("#")
        for page in _pages_of(base):
            if page in pages:
                return page + (f"#{fragment}" if fragment else "")
        return resolved if resolved != target else None

    # Reference definitions whose label holds code (`[`fs.open()`]: fs.md#…`, Node.js's
    # style) are not seen by rewrite_links, which reads around code spans: done here.
    text = "".join(
        piece if in_code else _REFDEF.sub(lambda m: m[1] + (absolute(m[2]) or m[2]), piece)
        for piece, in_code in segments(text)
    )
    return rewrite_links(text, absolute)


def _pages_of(twin: str) -> list[str]:
    """The page URLs a twin URL may stand for (the inverse of ``twin_candidates``)."""
    if twin.endswith("/index.html.md") or twin.endswith("/index.md"):
        folder = twin.rsplit("/", 1)[0] + "/"
        return [folder, folder + "index.html"]
    if twin.endswith(".html.md"):
        return [twin[:-3]]
    if twin.endswith(".md"):
        stem = twin[:-3]
        return [stem + ".html", stem + ".htm", stem]
    return []


async def fetch_twins(
    job: Job, records: Sequence[PageRecord], fetcher: TextFetcher, blobs: BlobStore
) -> int:
    """Fetch and store the twin of every ok page; returns how many were found. Nothing
    is fetched beyond the start page's candidates if the start page has no twin."""
    ok = [r for r in records if r.status is PageStatus.OK]
    pages = {r.url for r in ok}
    start = next((r for r in ok if r.url == job.url), ok[0] if ok else None)
    if start is None or not await _store_twin(job, start, fetcher, blobs, pages):
        return 0
    found = 1
    gate = asyncio.Semaphore(_PARALLEL)

    async def one(record: PageRecord) -> bool:
        async with gate:
            return await _store_twin(job, record, fetcher, blobs, pages)

    results = await asyncio.gather(*(one(r) for r in ok if r is not start))
    return found + sum(results)


async def _store_twin(
    job: Job, record: PageRecord, fetcher: TextFetcher, blobs: BlobStore, pages: set[str]
) -> bool:
    tries = [(url, None) for url in twin_candidates(record.url)]
    tries.append((record.url, NEGOTIATED))  # the page itself, asked for as markdown
    for candidate, accept in tries:
        try:
            result = await fetcher.fetch_text(candidate, accept)
        except FetchError as exc:  # 404, out of scope, robots...: no twin there
            log.debug("no twin at %s: %s", candidate, exc)
            continue
        if looks_like_markdown(result, negotiated=accept is not None):
            text = result.body.decode(result.encoding or "utf-8", errors="replace")
            cleaned = clean_twin(text, result.final_url, pages)
            blobs.put(
                twin_key(job.job_id, record.url_hash),
                cleaned.encode("utf-8"),
                "text/markdown; charset=utf-8",
            )
            return True
    return False


def with_native_twins(records: Sequence[PageRecord], blobs: BlobStore) -> list[PageRecord]:
    """Each ok page whose twin was stored now reads the twin (``native`` says so)."""
    out = []
    for record in records:
        key = twin_key(record.job_id, record.url_hash)
        if record.status is PageStatus.OK and blobs.exists(key):
            record = replace(record, markdown_key=key, native=MD_TWIN)
        out.append(record)
    return out


def site_files_key(job_id: str) -> str:
    return job_key(job_id, "native/site.json")


async def probe_site_files(job: Job, fetcher: TextFetcher, blobs: BlobStore) -> list[str]:
    """The URLs of the site files of ``SITE_FILES`` that the scope folder publishes;
    remembered in a blob for finalize."""
    folder = scope_for(job.url).path_prefix
    base = urlunsplit((*urlsplit(job.url)[:2], folder, "", ""))
    found = []
    for name in SITE_FILES:
        try:
            result = await fetcher.fetch_text(base + name)
        except FetchError:
            continue
        if looks_like_markdown(result):
            found.append(base + name)
    blobs.put(site_files_key(job.job_id), json.dumps(found).encode(), "application/json")
    return found


def site_file_records(job_id: str, blobs: BlobStore) -> list[PageRecord]:
    """A manifest line for each site file ``probe_site_files`` found."""
    data = blobs.get(site_files_key(job_id))
    urls = json.loads(data) if data else []
    return [
        PageRecord(
            job_id,
            url,
            url_hash(url),
            PageStatus.SKIPPED,
            order=10**9 + i,
            reason=NATIVE_SOURCE,
            native=url.rsplit("/", 1)[-1],
        )
        for i, url in enumerate(urls)
    ]
