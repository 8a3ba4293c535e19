"""Link recall: each content ``<a href>`` of the HTML must be a markdown link that lands
on the same page and the same place in it.

In-bundle targets must be the page's markdown file, with a fragment that file defines
(a heading's GitHub slug or an explicit ``<a id>``) and that names the heading holding
the HTML fragment; everything else must stay an absolute URL equal to the HTML's.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass
from urllib.parse import unquote, urldefrag, urlsplit

from .mdread import Markdown, heading_phrase
from .reference import LinkRef

_SCHEMES = ("http:", "https:", "mailto:", "ftp:")
Key = tuple[str, str]  # (normalised page URL or "abs", fragment or absolute URL)


def page_url(url: str) -> str:
    """A page's URL as compared here: no fragment, unquoted, ``index.html`` dropped."""
    bare = unquote(urldefrag(url)[0])
    return bare[: -len("index.html")] if bare.endswith("/index.html") else bare


@dataclass
class BundlePage:
    url: str  # normalised
    file: str  # path inside the bundle ("pages/0001-index.md")
    markdown: Markdown
    html_anchors: dict[str, str]  # element id -> heading phrase (from the page's HTML)


@dataclass
class LinkIndex:
    """The bundle as links see it: which URL each file holds and what anchors it has."""

    by_url: dict[str, BundlePage]
    by_file: dict[str, BundlePage]

    @classmethod
    def of(cls, pages: list[BundlePage]) -> LinkIndex:
        return cls({p.url: p for p in pages}, {p.file: p for p in pages})

    def key_of(self, source: BundlePage, target: str) -> Key | None:
        """Where a markdown link lands: (page URL, fragment), ("abs", URL), or None."""
        if target.startswith("#"):
            return source.url, unquote(target[1:])
        if target.lower().startswith(_SCHEMES):
            return "abs", unquote(target)
        path, fragment = urldefrag(target)
        if urlsplit(path).scheme:
            return None
        file = posixpath.normpath(posixpath.join(posixpath.dirname(source.file), unquote(path)))
        page = self.by_file.get(file)
        return (page.url, unquote(fragment)) if page is not None else None

    def accepted(self, link: LinkRef) -> set[Key]:
        url, fragment = page_url(link.target), unquote(urldefrag(link.target)[1])
        page = self.by_url.get(url)
        if page is None:
            return {("abs", unquote(link.target))}
        return {(url, f) for f in _fragments(page, fragment)}


def _fragments(page: BundlePage, fragment: str) -> set[str]:
    """The markdown fragments that land where the HTML fragment does."""
    md = page.markdown
    if not fragment:
        # the page itself: its top, or its title heading's anchor (where the top is)
        return {"", *_title_anchors(md)}
    good = {fragment} & md.anchors
    heading = page.html_anchors.get(fragment)
    if heading is None or heading == "":  # unknown id, or top of page: the page itself
        good.update(("", *_title_anchors(md)))
    if heading:
        good.update(md.heading_slugs.get(heading, ()))
    return good


def link_recall(
    source: BundlePage, expected: list[LinkRef], index: LinkIndex
) -> tuple[float, int]:
    have: Counter[Key] = Counter()
    for target in source.markdown.links:
        key = index.key_of(source, target)
        if key is not None:
            have[key] += 1
    found = sum(_take(have, index.accepted(link)) for link in expected)
    return (found / len(expected) if expected else 1.0), len(expected)


def _take(have: Counter[Key], accepted: set[Key]) -> bool:
    for key in sorted(accepted):
        if have[key] > 0:
            have[key] -= 1
            return True
    return False



def _title_anchors(md: Markdown) -> list[str]:
    """The anchor of the page's title, its first heading when that is an h1."""
    if not md.headings or md.headings[0][0] != 1:
        return []
    return md.heading_slugs.get(heading_phrase(md.headings[0][1]), [])[:1]
