"""Reading order: the order a person would read the crawled pages in.

1. The site's own navigation. The start page's nav is the spine (unless another
   page's nav covers at least twice as many crawled pages: a start page that only
   shows top-level entries); every other page's nav is then merged in, so sidebars
   that expand only the current section (Sphinx's collapsed toctree) still place
   each page right after its neighbour in that nav.
2. Pages no nav mentions, in sitemap.xml order.
3. The rest by the URL tree: depth-first by path segments, an index page before its
   children, siblings by discovery order.

Only ok pages are ordered; failed and skipped pages belong to the manifest alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .models import PageRecord, PageStatus
from .rewrite import url_key

_INDEX_NAMES = ("index.html", "index.htm")


def reading_order(pages: Sequence[PageRecord], start_url: str) -> list[PageRecord]:
    """Ok pages (those with markdown) in reading order; deterministic for equal input."""
    ok = sorted((p for p in pages if p.status is PageStatus.OK and p.markdown_key), key=_discovery)
    by_key: dict[str, PageRecord] = {}
    for page in ok:
        by_key.setdefault(url_key(page.url), page)
    in_nav = [by_key[key] for key in _nav_sequence(ok, by_key, start_url)]
    placed = {id(page) for page in in_nav}
    rest = [page for page in ok if id(page) not in placed]
    in_sitemap = sorted((p for p in rest if p.sitemap_rank is not None), key=_sitemap)
    unlisted = [p for p in rest if p.sitemap_rank is None]
    return in_nav + in_sitemap + _tree_order(unlisted)


def _discovery(page: PageRecord) -> tuple[int, str]:
    return page.order, page.url


def _sitemap(page: PageRecord) -> tuple[int, int, str]:
    return page.sitemap_rank or 0, page.order, page.url


def _nav_sequence(
    ok: Sequence[PageRecord], by_key: dict[str, PageRecord], start_url: str
) -> list[str]:
    """Keys of crawled pages in navigation order: the spine nav with the others merged in."""
    navs = _distinct_navs(ok, by_key)
    if not navs:
        return []
    spine_page, spine = _spine(navs, by_key.get(url_key(start_url)))
    sequence = list(spine)
    for page, keys in navs:
        if page is not spine_page:
            _merge(sequence, keys)
    return sequence


def _distinct_navs(
    ok: Sequence[PageRecord], by_key: dict[str, PageRecord]
) -> list[tuple[PageRecord, list[str]]]:
    """Each different nav once (most sites repeat one nav on every page), as the keys of
    the crawled pages it lists, with the first page showing it."""
    keys_of: dict[str, str] = {}  # url -> url_key, memoised: navs repeat the same urls
    navs, seen = [], set()
    for page in ok:
        if page.nav in seen:
            continue
        seen.add(page.nav)
        keys = (keys_of.setdefault(url, url_key(url)) for url in page.nav)
        crawled = list(dict.fromkeys(key for key in keys if key in by_key))
        if crawled:
            navs.append((page, crawled))
    return navs


def _spine(
    navs: list[tuple[PageRecord, list[str]]], start: PageRecord | None
) -> tuple[PageRecord, list[str]]:
    best = max(navs, key=lambda item: len(item[1]))  # max keeps the first on ties
    for page, keys in navs:
        # navs are distinct: the start page's is listed under whichever page showed it first
        if start is not None and page.nav == start.nav and 2 * len(keys) >= len(best[1]):
            return page, keys
    return best


def _merge(sequence: list[str], nav: list[str]) -> None:
    """Insert the nav's new keys after their predecessor in that nav (or before the first
    known key, for leading new ones); a nav sharing nothing is appended."""
    known = set(sequence)
    fresh = [key for key in nav if key not in known]
    if len(fresh) in (0, len(nav)):
        sequence.extend(fresh)
        return
    pending: list[str] = []
    previous: str | None = None
    cursor: int | None = None  # where the last insertion went; found lazily (index is O(n))
    for key in nav:
        if key in known:
            previous, cursor = key, None
            if pending:
                at = sequence.index(key)
                sequence[at:at] = pending
                pending = []
        elif previous is None:
            pending.append(key)
        else:
            cursor = (sequence.index(previous) if cursor is None else cursor) + 1
            sequence.insert(cursor, key)


@dataclass
class _Node:
    first: tuple[int, str] = (2**62, "")
    pages: list[PageRecord] = field(default_factory=list)
    children: dict[str, _Node] = field(default_factory=dict)


def _tree_order(pages: Sequence[PageRecord]) -> list[PageRecord]:
    root = _Node()
    for page in pages:
        node = root
        for segment in tree_path(page.url):
            node.first = min(node.first, _discovery(page))
            node = node.children.setdefault(segment, _Node())
        node.first = min(node.first, _discovery(page))
        node.pages.append(page)
    return list(_walk(root))


def _walk(node: _Node) -> Iterator[PageRecord]:
    yield from sorted(node.pages, key=_discovery)
    for child in sorted(node.children.values(), key=lambda n: n.first):
        yield from _walk(child)


def tree_path(url: str) -> list[str]:
    """A URL's place in the site tree: host, then path segments, where ``a/index.html``
    and ``a/`` are the node ``a`` itself and ``a.html`` is the same node as ``a/``."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if segments and segments[-1].lower() in _INDEX_NAMES:
        segments.pop()
    elif segments:
        segments[-1] = strip_html_suffix(segments[-1])
    return [parts.netloc.lower(), *segments]


def strip_html_suffix(segment: str) -> str:
    for suffix in (".html", ".htm"):
        if segment.lower().endswith(suffix):
            return segment[: -len(suffix)]
    return segment


def scope_dir(url: str) -> str:
    """The directory part of a URL's path (``/docs/v2/intro.html`` -> ``/docs/v2/``)."""
    path = urlsplit(url).path or "/"
    return path[: path.rfind("/") + 1]


def relative_segments(url: str, start_url: str) -> list[str]:
    """Path segments of ``url`` below the start URL's directory (all of them when the
    URL lies outside it); a trailing ``/`` yields a final empty segment."""
    path = urlsplit(url).path or "/"
    base = scope_dir(start_url)
    if path.startswith(base):
        path = path[len(base) :]
    return path.lstrip("/").split("/")
