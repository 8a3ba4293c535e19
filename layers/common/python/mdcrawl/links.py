"""Links from one HTML page: absolute, normalised, in page order. Pure: no I/O.

Which elements count: ``<a href>`` and ``<area href>`` (navigation), and the target of a
``<meta http-equiv="refresh">`` (Sphinx and mkdocs leave such pages behind when a page
moves), and ``<link rel>`` navigation relations (next, prev, index, contents...): some
generators reach their index pages only through ``<link rel="index">``. ``<base href>``
changes what relative links resolve against. ``rel=canonical`` is returned apart: it names
the page itself, not a page to visit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree, html

from .urls import normalize_url

LINK_XPATH = "//a[@href] | //area[@href] | //meta[@http-equiv][@content] | //link[@rel][@href]"
# <link rel> values that name another page of the document set worth reading
# (search pages, stylesheets, icons, feeds and alternates are not).
NAVIGATION_RELS = frozenset(
    {"next", "prev", "previous", "index", "contents", "toc", "start", "first", "last",
     "up", "chapter", "section", "subsection", "glossary", "appendix", "help"}
)
_XML_DECLARATION_RE = re.compile(r"^\s*<\?xml[^>]*\?>")
_REFRESH_URL_RE = re.compile(r"""^\s*\d*\.?\d*\s*[;,]\s*url\s*=\s*['"]?([^'"]+)""", re.I)


@dataclass(frozen=True)
class PageLinks:
    links: tuple[str, ...]  # normalised absolute http(s) urls, page order, no duplicates
    canonical: str | None  # the page's rel=canonical, normalised, if any
    base: str  # what relative links were resolved against (the page url or <base href>)


def extract_links(html_doc: bytes | str, url: str) -> PageLinks:
    """Links of the page at ``url``; the page's own URL is left out of ``links``."""
    root = _parse(html_doc)
    if root is None:
        return PageLinks((), None, url)
    base = _base_href(root, url)
    own = normalize_url(url)
    # Docs pages repeat the same hrefs (nav on every page, many links per target):
    # normalising is the costly part, so each distinct raw href is normalised once.
    raw: dict[str, None] = {}
    for element in root.xpath(LINK_XPATH):
        target = _target(element)
        if target is not None:
            raw.setdefault(target, None)
    seen: dict[str, None] = {}
    for target in raw:
        link = normalize_url(target, base)
        if link is not None and link != own:
            seen.setdefault(link, None)
    return PageLinks(tuple(seen), _canonical(root, base), base)


def _parse(html_doc: bytes | str) -> html.HtmlElement | None:
    if isinstance(html_doc, str):
        # lxml refuses a str that still carries an XML encoding declaration (XHTML pages).
        html_doc = _XML_DECLARATION_RE.sub("", html_doc, count=1)
    if not html_doc.strip():
        return None
    try:
        # From bytes, lxml finds the charset in <meta>; from str, it is already decoded.
        return html.document_fromstring(html_doc)
    except (etree.ParserError, ValueError):
        return None


def _base_href(root: html.HtmlElement, url: str) -> str:
    for href in root.xpath("//base/@href"):
        resolved = normalize_url(str(href), url)
        if resolved is not None:
            return resolved
        break  # only the first <base href> counts; an unusable one means "the page url"
    return url


def _target(element: html.HtmlElement) -> str | None:
    if element.tag == "link":
        rels = set(element.get("rel", "").lower().split())
        return element.get("href") if rels & NAVIGATION_RELS else None
    if element.tag != "meta":
        return element.get("href")
    if element.get("http-equiv", "").strip().lower() != "refresh":
        return None
    match = _REFRESH_URL_RE.match(element.get("content", ""))
    return match.group(1).strip() if match else None


def _canonical(root: html.HtmlElement, base: str) -> str | None:
    for link in root.xpath("//link[@rel][@href]"):
        if "canonical" in link.get("rel", "").lower().split():
            return normalize_url(link.get("href", ""), base)
    return None
