"""The Python API: ``from mdcrawl import crawl``.

    result = crawl("https://docs.example.org/en/latest/", max_pages=200)
    for page in result.pages:
        print(page.url, page.tokens, page.markdown[:80])

The same crawl as ``mdcrawl crawl`` (same options, same cache and resume, same output
folder, recorded into the docs library), returned as values instead of printed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .errors import InvalidInput
from .library import Library
from .models import CrawlOptions, Job
from .runtime.local import LocalRun, cache_root, run_crawl
from .tokens import estimate_tokens

OPTION_NAMES = tuple(f.name for f in fields(CrawlOptions))


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    markdown: str  # "" for a page that failed or was skipped; links absolute
    tokens: int  # estimate_tokens(markdown): characters / 4
    status: str  # "ok", "failed", "skipped"
    reason: str | None = None  # why it failed or was skipped


@dataclass(frozen=True)
class CrawlResult:
    job: Job
    out_dir: Path  # docs.md, pages/, llms.txt, llms-full.txt, chunks.jsonl, manifest…
    pages: list[Page]  # reading order first, then the URLs that were not converted
    site: str | None  # the library's name for the site, and the version recorded
    version: str | None

    @property
    def ok(self) -> list[Page]:
        return [p for p in self.pages if p.status == "ok"]

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.ok)


class _Quiet:
    def update(self, job: Job) -> None:
        pass

    def close(self) -> None:
        pass


def crawl(
    url: str,
    *,
    out_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    label: str | None = None,
    **options: Any,
) -> CrawlResult:
    """Crawl ``url`` to completion. ``options`` are ``CrawlOptions`` fields (``max_pages``,
    ``max_depth``, ``budget_s``, ``concurrency``, ``include``, ``exclude``,
    ``max_age_s``, ``use_cache``, ``respect_robots``, ``max_tokens``…). Raises
    InvalidInput for a bad URL or an unknown option."""
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise InvalidInput(
            f"unknown option(s) {', '.join(unknown)}; known: {', '.join(OPTION_NAMES)}"
        )
    for key in ("include", "exclude"):
        if isinstance(options.get(key), str):
            options[key] = (options[key],)
    run = LocalRun(
        url,
        CrawlOptions.from_dict(options),
        Path(out_dir) if out_dir is not None else None,
        Path(cache_dir) if cache_dir is not None else None,
        label,
    )
    result = run_crawl(run, _Quiet())
    recorded = result.recorded
    converted = _converted(run, recorded.snapshot) if recorded else {}
    pages = [_page(line, converted) for line in _manifest(result.out_dir)]
    snapshot = recorded.snapshot if recorded else None
    return CrawlResult(
        result.job,
        result.out_dir,
        pages,
        snapshot.site if snapshot else None,
        snapshot.version if snapshot else None,
    )


def _converted(run: LocalRun, snapshot: Any) -> dict[str, str]:
    library = Library(cache_root(run.cache_dir))
    try:
        return {p.url: p.markdown for p in library.pages(snapshot)}
    finally:
        library.close()


def _manifest(out_dir: Path) -> list[dict[str, Any]]:
    path = out_dir / "manifest.jsonl"
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def _page(line: dict[str, Any], converted: dict[str, str]) -> Page:
    markdown = converted.get(line["url"], "") if line["status"] == "ok" else ""
    return Page(
        line["url"],
        line.get("title") or "",
        markdown,
        estimate_tokens(markdown),
        line["status"],
        line.get("reason"),
    )
