"""Page titles decided over the whole site, once every title is known (at assembly).

A page's title comes from its own h1, else its ``<title>``. Some sites give many pages
the same one: every page's ``<title>`` is the site's name, or a header h1 ("Node.js
documentation") stands above each page's real heading, or module pages are all called
"Documentation". A title held by ``SHARED_AT_LEAST`` pages or more names none of them:
each of those pages takes the h2 right under that h1 (it becomes the page's h1), else
the last part of its URL (above the old h1, now an h2).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from .models import PageRecord
from .order import strip_html_suffix
from .rewrite import headings, plain_text

SHARED_AT_LEAST = 3


@dataclass(frozen=True)
class Retitle:
    title: str  # the page's new title
    heading: str | None  # the markdown line of the heading it came from (then dropped)


def shared_titles(pages: Sequence[PageRecord]) -> set[str]:
    counts = Counter(" ".join(p.title.split()).casefold() for p in pages)
    return {title for title, n in counts.items() if title and n >= SHARED_AT_LEAST}


def site_retitles(
    pages: Sequence[PageRecord], read_markdown: Callable[[str], str]
) -> dict[str, Retitle]:
    """``{url_hash: Retitle}`` for the pages whose title other pages share."""
    shared = shared_titles(pages)
    if not shared:
        return {}
    found = {}
    for page in pages:
        if " ".join(page.title.split()).casefold() in shared:
            found[page.url_hash] = _retitle(read_markdown(page.markdown_key or ""), page, shared)
    return found


def _retitle(markdown: str, page: PageRecord, shared: set[str]) -> Retitle:
    """The heading right under the shared h1, if it is an h2 (a section heading naming
    the page: Node's "## File system" under the site's h1); else the URL's name (a
    deeper heading, "#### Instances", names a part of the page, not the page)."""
    found = headings(markdown)[1:2] if markdown.startswith("# ") else []
    for level, text in found:
        title = " ".join(plain_text(text).split())
        if level == 2 and title and title.casefold() not in shared:
            return Retitle(title, f"{'#' * level} {text}")
    return Retitle(url_name(page.url), None)


def url_name(url: str) -> str:
    """The last meaningful part of a URL's path: ``/src/Data.Aeson.html`` -> ``Data.Aeson``."""
    segments = [s for s in unquote(urlsplit(url).path).split("/") if s]
    while segments and strip_html_suffix(segments[-1]).lower() in ("index", "default"):
        segments.pop()
    return strip_html_suffix(segments[-1]) if segments else (urlsplit(url).netloc or url)


def apply_retitle(markdown: str, fix: Retitle) -> str:
    """The page's markdown under its new title: the h1 replaced, the heading it came
    from dropped (it would repeat the title)."""
    if fix.heading is not None:
        lines = markdown.split("\n")
        for i, line in enumerate(lines[1:], start=1):
            if line.rstrip() == fix.heading:
                end = i + 1 if i + 1 < len(lines) and not lines[i + 1].strip() else i
                del lines[i : end + 1]
                break
        markdown = "\n".join(lines)
    if not markdown.startswith("# "):
        return markdown  # the assembler gives it the page's (new) title
    if fix.heading is None:
        # A title from the URL: the shared h1 may be the page's own ("Documentation"
        # above a module's docs): it stays, one level down, under the new title.
        return f"# {fix.title}\n\n#{markdown}"
    end = markdown.find("\n")
    return f"# {fix.title}" + (markdown[end:] if end >= 0 else "")
