"""The llms.txt index (https://llmstxt.org) and the site's name.

Shape: ``# Name``, a ``> summary`` blockquote, a paragraph of detail, then ``## Section``
headings, each with ``- [Title](url): description`` lines. Sections group pages by the
first directory under the crawl's scope (``/docs/user/install.html`` under ``/docs/``
is in "User"); pages directly in the scope are in "Docs". Sections appear in the
order their first page is read; pages inside a section keep the reading order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from .models import PageRecord
from .order import relative_segments, strip_html_suffix
from .rewrite import url_key

ROOT_SECTION = "Docs"
_TITLE_SEPARATORS = (" — ", " – ", " | ", " · ", " - ", " :: ")


def site_name(pages: Sequence[PageRecord], start_url: str) -> str:
    """The site's name: the title suffix most pages share (``Quickstart — Requests 2.32
    documentation`` -> ``Requests 2.32 documentation``), else the start page's title,
    else the host."""
    shared = _shared_title_suffix([page.title for page in pages])
    if shared:
        return shared
    start_key = url_key(start_url)
    for page in pages:
        if url_key(page.url) == start_key and page.title.strip():
            return page.title.strip()
    return urlsplit(start_url).netloc or start_url


def _shared_title_suffix(titles: Sequence[str]) -> str | None:
    counts: dict[str, int] = {}
    for title in titles:
        for sep in _TITLE_SEPARATORS:
            if sep in title:
                suffix = title.rsplit(sep, 1)[1].strip()
                counts[suffix] = counts.get(suffix, 0) + 1
                break
    if not counts:
        return None
    suffix, count = max(counts.items(), key=lambda item: item[1])
    return suffix if suffix and count >= 2 and 2 * count > len(titles) else None


def section_of(url: str, start_url: str) -> str:
    """The llms.txt section a page belongs to, from its first directory under the scope."""
    segments = relative_segments(url, start_url)
    if len(segments) < 2 or not segments[0]:
        return ROOT_SECTION
    return humanize(segments[0])


def humanize(segment: str) -> str:
    words = re.sub(r"[-_.+]+", " ", strip_html_suffix(segment)).strip()
    return words[:1].upper() + words[1:] if words else ROOT_SECTION


def llms_txt(name: str, start_url: str, pages: Sequence[PageRecord], summary: str = "") -> str:
    """The llms.txt text for ``pages`` (ok pages, in reading order)."""
    summary = _one_line(summary) or f"Documentation of {name}, from {start_url}."
    lines = [f"# {_one_line(name)}", "", f"> {summary}", "", _detail(start_url, len(pages))]
    for section, members in _sections(pages, start_url):
        lines += ["", f"## {section}", ""]
        lines += [_entry(page) for page in members]
    return "\n".join(lines) + "\n"


def _detail(start_url: str, count: int) -> str:
    return (
        f"{count} pages crawled from {start_url}, listed in reading order. "
        "The full text of every page is in `docs.md`, and one file per page in `pages/`."
    )


def _sections(pages: Sequence[PageRecord], start_url: str) -> list[tuple[str, list[PageRecord]]]:
    groups: dict[str, list[PageRecord]] = {}
    for page in pages:
        groups.setdefault(section_of(page.url, start_url), []).append(page)
    return list(groups.items())


def _entry(page: PageRecord) -> str:
    title = _escape_brackets(_one_line(page.title) or page.url)
    description = _one_line(page.description)
    line = f"- [{title}]({page.url})"
    return f"{line}: {description}" if description else line


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _escape_brackets(text: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", text)
