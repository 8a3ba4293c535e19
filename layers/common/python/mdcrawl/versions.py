"""Which docs version (and locale) a URL names, and the site it is a version of.

Docs hosts put the version in a path segment: Read the Docs ``/en/latest/``,
``/en/stable/``; Python ``/3.11/``; many sites ``/v2/``, ``/2.x/``, ``/1.4.0/``. The
library stores a crawl as (site, version): the site is the host and the scope's folder
with the version (and locale) segments taken out, so ``/en/latest/`` and ``/en/3.2/`` of
one project are two versions of one site. Pure functions.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

# Named channels and numbered releases; a segment must be one of these whole.
_VERSION = re.compile(
    r"^(?:latest|stable|dev|devel|development|main|master|nightly|next|current|"
    r"v?\d+(?:\.(?:\d+|x))*(?:-?(?:rc|beta|alpha|b|a)\d*)?|v\d+[a-z]*)$",
    re.I,
)
# Locales only count next to a version segment: "/en/latest/", "/ja/3.11/". A two-letter
# folder elsewhere ("/go/", "/js/") is a topic, not a language.
_LOCALE = re.compile(r"^[a-z]{2}(?:[-_][a-zA-Z]{2,4})?$")


@dataclass(frozen=True)
class VersionInfo:
    version: str | None  # "latest", "3.11", "v2"... or None
    locale: str | None  # "en", "pt-br"... or None
    site: str  # host + folder without the version and locale segments, "host/docs/"


def version_info(url: str) -> VersionInfo:
    """The version and locale segments of ``url``'s folder, and the site they belong to."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if segments and "." in segments[-1] and not _VERSION.match(segments[-1]):
        segments = segments[:-1]  # a page name ("intro.html"), not a folder
    elif segments and not parts.path.endswith("/") and not _VERSION.match(segments[-1]):
        segments = segments[:-1]
    version_at = next((i for i, s in enumerate(segments) if _VERSION.match(s)), None)
    locale_at = _locale_index(segments, version_at)
    kept = [s for i, s in enumerate(segments) if i not in (version_at, locale_at)]
    site = parts.netloc + "/" + "".join(f"{s}/" for s in kept)
    return VersionInfo(
        segments[version_at] if version_at is not None else None,
        segments[locale_at].lower() if locale_at is not None else None,
        site,
    )


def _locale_index(segments: list[str], version_at: int | None) -> int | None:
    if version_at is None:
        return None
    for index in (version_at - 1, version_at + 1):
        if 0 <= index < len(segments) and _LOCALE.match(segments[index]):
            return index
    return None


def version_label(url: str, label: str | None, crawled_at: float) -> str:
    """``--label``, else the version in the start URL, else the crawl's UTC date."""
    if label:
        return label
    info = version_info(url)
    if info.version:
        return info.version
    return time.strftime("%Y-%m-%d", time.gmtime(crawled_at))
