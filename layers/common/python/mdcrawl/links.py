"""Links from one HTML page: absolute, normalised, in page order. Pure: no I/O.

Which elements count: ``<a href>`` and ``<area href>`` (navigation), and the target of a
``<meta http-equiv="refresh">`` (Sphinx and mkdocs leave such pages behind when a page
moves), and ``<link rel>`` navigation relations (next, prev, index, contents...): some
generators reach their index pages only through ``<link rel="index">``. ``<base href>``
changes what relative links resolve against. ``rel=canonical`` is returned apart: it names
the page itself, not a page to visit.

The page is read through ``document.py`` (the HTTP charset, the XML declaration, the
``<base>`` and the meta refresh read as the converter reads them);
``tree_links`` takes a tree already parsed, so the local crawl step reads a page's links
and converts it from one parse (``pipeline/reading.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlparse

from lxml import html

from . import document, linkjoin
from .urls import normalize_url

# The elements that can hold a link; ``_target`` reads the attributes each needs.
LINK_TAGS = ("a", "area", "meta", "link")
# <link rel> values that name another page of the document set worth reading
# (search pages, stylesheets, icons, feeds and alternates are not).
NAVIGATION_RELS = frozenset(
    {"next", "prev", "previous", "index", "contents", "toc", "start", "first", "last",
     "up", "chapter", "section", "subsection", "glossary", "appendix", "help"}
)


@dataclass(frozen=True)
class PageLinks:
    links: tuple[str, ...]  # normalised absolute http(s) urls, page order, no duplicates
    canonical: str | None  # the page's rel=canonical, normalised, if any
    base: str  # what relative links were resolved against (the page url or <base href>)


def extract_links(html_doc: bytes | str, url: str, encoding: str | None = None) -> PageLinks:
    """Links of the page at ``url`` (``encoding``: the HTTP charset, if the server sent
    one); the page's own URL is left out of ``links``."""
    text = document.decode(html_doc, encoding)
    if not text.strip():
        return PageLinks((), None, url)
    return tree_links(document.parse_tree(text), url)


def tree_links(root: html.HtmlElement, url: str) -> PageLinks:
    """``extract_links`` of a page already parsed (before anything prunes the tree)."""
    base = _base_href(root, url)
    own = normalize_url(url)
    # Docs pages repeat the same hrefs (nav on every page, many links per target, API
    # pages' "#method.x" into themselves): normalising is the costly part, so each
    # distinct href is normalised once, and hrefs differing only in their fragment
    # (which normalising drops) count as one.
    targets: list[str] = []
    canonical: str | None = None
    # One walk over the four tags, in document order as the XPath union gives them,
    # without the union's sorting (a quarter of this step's CPU on a page of 400 links).
    # An API page holds hundreds of <a>: theirs is the short way, the rest ``_target``.
    for element in root.iter(*LINK_TAGS):
        tag = element.tag
        if tag == "a" or tag == "area":
            target = element.get("href")
        else:
            target = _target(element)
            if canonical is None and tag == "link" and _is_canonical(element):
                canonical = element.get("href")
        if target is not None:
            targets.append(target)
    # Each distinct href read once (dict.fromkeys keeps the first of each, in order),
    # then by its page part: the same first occurrences, in the same order.
    raw = dict.fromkeys(_page_part(target) for target in dict.fromkeys(targets))
    seen: dict[str, None] = {}
    folder, join = _folder(base), _joining(base)
    for target in raw:
        link = _resolved(target, base, folder, join)
        if link is not None and link != own:
            seen.setdefault(link, None)
    found = normalize_url(canonical, base) if canonical is not None else None
    return PageLinks(tuple(seen), found, base)


# Relative hrefs resolved per folder, not per page: the pages of one folder (an API's
# module, a manual's chapter) share their navigation, and joining was the dearest part
# of reading a page's links once ``urls`` memoised the normalising. The rest are joined
# by the page's ``linkjoin`` joiner (``_joining``). Bounded: the memo is emptied when
# full; pages of a folder are read close together (a crawl goes breadth first), so a
# small one saves as much as a large one (Rust core: 4,096 entries, under 1 MB, avoid
# 37 % of the joins; 32,768 entries, 38 %). Together: Rust core's links read alone
# cost a third less CPU, read in a worker between conversions 10-17 % less.
_RESOLVED: dict[tuple[str, str], str | None] = {}
_RESOLVED_MAX = 4096


def _resolved(
    target: str, base: str, folder: str | None, join: Callable[[str], str] | None
) -> str | None:
    """``normalize_url(target, base)``, memoised by (``folder``, ``target``) where that
    decides it: ``urljoin`` reads of a base only its scheme, host and folder (the path
    up to its last "/") once the href has a path of its own (``_folder_relative``)."""
    if folder is None or not _folder_relative(target):
        return _normalized_against(target, base, join)
    key = (folder, target)
    try:
        return _RESOLVED[key]
    except KeyError:
        pass
    link = _normalized_against(target, base, join)
    if len(_RESOLVED) >= _RESOLVED_MAX:
        _RESOLVED.clear()
    _RESOLVED[key] = link
    return link


def _joining(base: str) -> Callable[[str], str] | None:
    """``urljoin`` against ``base`` (None: no base, nothing to join), made by the page's
    ``linkjoin`` joiner: urljoin's answers, the plain hrefs resolved without parsing,
    and each href joined once for the page's links and its conversion alike (which asks
    the same joiner for the same base: ``extract.absolutize``)."""
    base = base.strip()
    return linkjoin.joiner(base).join if base else None


def _normalized_against(
    target: str, base: str, join: Callable[[str], str] | None
) -> str | None:
    """``normalize_url(target, base)``, the join made by ``join``."""
    if join is None:
        return normalize_url(target, base)
    try:
        joined = join(target.strip())
    except ValueError:
        return None  # what normalize_url answers when urljoin raises
    if joined != joined.strip():  # kept by urljoin ("a #"), but normalize_url would strip it
        return normalize_url(target, base)
    return normalize_url(joined)


def _folder_relative(target: str) -> bool:
    """Does ``urljoin`` resolve this href by the base's folder alone? Yes when it has no
    scheme (no ":") and starts with a path: not empty, not "?query", "#fragment" or
    ";params" (those keep the base's path, query or parameters), and not with a control
    character (``urlsplit`` strips those first, which could leave one of the above)."""
    text = target.strip()
    return bool(text) and text[0] > " " and text[0] not in "?#;" and ":" not in text


def _folder(base: str) -> str | None:
    """What ``urljoin`` reads of ``base`` to resolve a folder-relative href: its scheme,
    host and path segments but the last (as a string key); None if it cannot be split."""
    try:
        parts = urlparse(base.strip())
    except ValueError:
        return None
    segments = parts.path.split("/")
    if segments[-1] != "":
        del segments[-1]
    return "\0".join((parts.scheme, parts.netloc, str(len(segments)), "/".join(segments)))


def _page_part(href: str) -> str:
    """The href without its fragment, when that changes nothing ``normalize_url`` gives
    (it drops the fragment; it strips white space only at the ends, so an href whose
    page part would end in white space is kept whole)."""
    text = href.strip()
    page = text.split("#", 1)[0]
    return page if page == page.rstrip() else text


def _base_href(root: html.HtmlElement, url: str) -> str:
    """An unusable ``<base href>`` means "the page url"."""
    href = document.base_href(root)
    resolved = normalize_url(href, url) if href is not None else None
    return resolved if resolved is not None else url


def _target(element: html.HtmlElement) -> str | None:
    if element.tag == "link":
        rels = set(element.get("rel", "").lower().split())
        return element.get("href") if rels & NAVIGATION_RELS else None
    if element.tag != "meta":
        return element.get("href")
    if not document.is_refresh(element):
        return None
    return document.refresh_url(element.get("content", ""))


def _is_canonical(link: html.HtmlElement) -> bool:
    return link.get("href") is not None and "canonical" in link.get("rel", "").lower().split()
