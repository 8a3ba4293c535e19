"""A whole crawl scored: each page of ``manifest.jsonl`` against its HTML file on disk,
then per metric the mean over pages and the 5th percentile (the worst pages' level)."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .gold import GENERIC, Gold
from .links import BundlePage, LinkIndex, page_url
from .mdread import read_markdown
from .metrics import LOWER_IS_BETTER, METRICS, Score, score
from .reference import Reference, read_page

SITE_METRICS = (*METRICS, "titles")
_SHARED_TITLE = 0.5  # a <title> on half the pages or more names the site, not the page


@dataclass(frozen=True)
class PageResult:
    url: str
    file: str
    scores: dict[str, Score]


@dataclass(frozen=True)
class Aggregate:
    mean: float
    tail: float  # 5th percentile (95th for metrics where lower is better)
    pages: int  # pages that had something to measure


@dataclass(frozen=True)
class SiteResult:
    gold: Gold
    pages: list[PageResult]
    metrics: dict[str, Aggregate]

    def worst(self, metric: str, n: int = 5) -> list[tuple[str, float]]:
        measured = [(p.url, p.scores[metric].value) for p in self.pages if p.scores[metric].n]
        return sorted(measured, key=lambda x: x[1], reverse=metric in LOWER_IS_BETTER)[:n]


@dataclass
class _Loaded:
    entry: dict[str, object]
    ref: Reference
    page: BundlePage


def read_manifest(bundle: Path) -> list[dict[str, object]]:
    with (bundle / "manifest.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def html_file(root: Path, base_url: str, url: str) -> Path | None:
    """The file a static server at ``base_url`` serving ``root`` answered ``url`` from."""
    path = unquote(urlsplit(url).path)
    base = urlsplit(base_url).path
    if not path.startswith(base):
        return None
    relative = path[len(base) :].lstrip("/")
    file = root / relative
    if not relative or file.is_dir():
        file = file / "index.html"
    return file if file.is_file() else None


def score_bundle(bundle: Path, root: Path, base_url: str, gold: Gold = GENERIC) -> SiteResult:
    """Score the crawl output in ``bundle`` of the site in ``root`` served at ``base_url``."""
    loaded = _load(bundle, root, base_url, gold)
    index = LinkIndex.of([item.page for item in loaded])
    refs = [item.ref for item in loaded]
    titles = title_scores([_title(item) for item in loaded], refs)
    pages = []
    for item, ref, title in zip(loaded, refs, titles, strict=True):
        scores = score(ref, item.page.markdown, item.page, index)
        scores["titles"] = title
        pages.append(PageResult(str(item.entry["url"]), item.page.file, scores))
    return SiteResult(gold, pages, aggregate(pages))


def _load(bundle: Path, root: Path, base_url: str, gold: Gold) -> list[_Loaded]:
    loaded = []
    for entry in read_manifest(bundle):
        if entry.get("status") != "ok" or not entry.get("file"):
            continue
        html = html_file(root, base_url, str(entry["url"]))
        if html is None:
            continue
        ref = read_page(html.read_bytes(), str(entry["url"]), gold)
        markdown = read_markdown((bundle / str(entry["file"])).read_text(encoding="utf-8"))
        page = BundlePage(page_url(str(entry["url"])), str(entry["file"]), markdown, ref.anchors)
        loaded.append(_Loaded(entry, ref, page))
    return loaded


def _title(item: _Loaded) -> str:
    """The page's title as the bundle gives it: the manifest's, else its first h1."""
    if item.entry.get("title"):
        return str(item.entry["title"])
    return next((text for level, text in item.page.markdown.headings if level == 1), "")


def title_scores(titles: list[str], refs: list[Reference]) -> list[Score]:
    """A title is good when it is not empty, not the site-wide <title> most pages share,
    and no page with different content (another first heading) has the same title."""
    shared = Counter(ref.title for ref in refs)
    site_titles = {
        t for t, n in shared.items() if len(refs) >= 3 and n >= _SHARED_TITLE * len(refs)
    }
    headings_by_title: dict[str, set[str]] = {}
    for title, ref in zip(titles, refs, strict=True):
        headings_by_title.setdefault(title, set()).add(ref.first_heading)
    scores = []
    for title in titles:
        good = bool(title.strip()) and title not in site_titles
        good = good and len(headings_by_title[title]) == 1
        scores.append(Score(float(good), 1))
    return scores


def aggregate(pages: list[PageResult]) -> dict[str, Aggregate]:
    result = {}
    for metric in SITE_METRICS:
        values = sorted(p.scores[metric].value for p in pages if p.scores[metric].n)
        if not values:
            empty = 0.0 if metric in LOWER_IS_BETTER else 1.0
            result[metric] = Aggregate(empty, empty, 0)
            continue
        if metric in LOWER_IS_BETTER:
            values.reverse()
        tail = values[math.floor(0.05 * (len(values) - 1))]
        result[metric] = Aggregate(sum(values) / len(values), tail, len(values))
    return result
