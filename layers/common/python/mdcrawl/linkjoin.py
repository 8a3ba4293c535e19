"""``urljoin`` for the links a docs page is made of, equal to it and several times cheaper.

A page of API docs holds hundreds of links ("struct.Span.html", "../index.html",
"#method.new", "https://…"): making each absolute with ``urllib.parse.urljoin`` parsed
both URLs anew and cost a fifth of the extraction. ``Joiner`` parses the base once and
resolves the plain forms itself with ``urljoin``'s own steps (its RFC 3986 merge and
dot-segment walk, and its quirks: empty segments inside a merged path go, an empty
fragment goes); anything else (a query, ``;params``, a ``:``, ``//host``, a space,
non-ASCII, an unusual base) goes to ``urljoin`` itself. ``tests/unit/test_linkjoin.py``
holds the two equal on every link of several real docs trees and on edge cases.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urldefrag, urljoin, urlparse, urlunparse

# Path characters that never start a scheme (":"), params (";"), a query ("?") or a
# fragment ("#"), and that urlsplit neither strips nor removes.
_PATH = r"[A-Za-z0-9._~!$&'()*+,=@%/-]"
_FRAGMENT = r"(?:#[!-~]*)?"  # printable ASCII: kept as it is
# A relative reference without a network location: a path, a fragment, or both.
_RELATIVE = re.compile(rf"(?!//)(?P<path>{_PATH}*){_FRAGMENT}\Z")
# An absolute http(s) URL with a plain host (and port), path and fragment.
_ABSOLUTE = re.compile(rf"(?P<scheme>https?)://[A-Za-z0-9.-]+(?::[0-9]*)?(?:/{_PATH}*)?{_FRAGMENT}\Z")
_SCHEMES = ("http", "https")


class Joiner:
    """``urljoin(base, href)`` and ``urldefrag(urljoin(base, href)).url`` for one base,
    each distinct href computed once."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.joined: dict[str, str] = {}
        self.parts = _base_parts(base)

    def join(self, href: str) -> str:
        """``urljoin(self.base, href)``, raising what it raises."""
        found = self.joined.get(href)
        if found is None:
            found = self._fast(href)
            if found is None:
                found = urljoin(self.base, href)
            self.joined[href] = found
        return found

    def join_defragged(self, href: str) -> str:
        """``urldefrag(urljoin(self.base, href)).url``."""
        joined = self.join(href)
        if "#" not in joined:
            return joined  # urldefrag returns such a URL as it is
        if self.parts is not None and href and (_RELATIVE.match(href) or _ABSOLUTE.match(href)):
            if href[0] == "#":
                return self.parts.whole_defragged
            # scheme://host/path#fragment, no params, no query: the fragment cut off
            return joined.partition("#")[0]
        return urldefrag(joined).url

    def _fast(self, href: str) -> str | None:
        parts = self.parts
        if parts is None or not href:
            return None  # urljoin answers an empty href with the base
        relative = _RELATIVE.match(href)
        if relative is not None:
            return _resolve(parts, relative.group("path"), href.partition("#")[2])
        absolute = _ABSOLUTE.match(href)
        if absolute is not None:
            if absolute.group("scheme") != parts.scheme:
                return href  # another scheme: urljoin returns the reference untouched
            # urlunparse(urlparse(href)): the same text, less an empty fragment's "#"
            before, _, fragment = href.partition("#")
            return f"{before}#{fragment}" if fragment else before
        return None


class _Base:
    __slots__ = ("scheme", "netloc", "directory", "whole", "whole_defragged")

    def __init__(self, scheme: str, netloc: str, path: str, params: str, query: str) -> None:
        self.scheme, self.netloc = scheme, netloc
        directory = path.split("/")
        if directory[-1] != "":
            del directory[-1]
        self.directory = directory
        # What an href of only a fragment keeps of the base: all but its fragment.
        self.whole = urlunparse((scheme, netloc, path, params, query, ""))
        # urldefrag of the base joined with a fragment: that text parsed and put back
        self.whole_defragged = urldefrag(self.whole + "#").url


def _base_parts(base: str) -> _Base | None:
    """The base parsed, if it is one the fast path knows: http(s) with a host."""
    if not base:
        return None
    try:
        scheme, netloc, path, params, query, _ = urlparse(base)
    except ValueError:
        return None
    if scheme not in _SCHEMES or not netloc:
        return None
    return _Base(scheme, netloc, path, params, query)


def _resolve(base: _Base, path: str, fragment: str) -> str:
    """urljoin's steps for a reference of a path (no params, no query) and a fragment."""
    if not path:
        return f"{base.whole}#{fragment}" if fragment else base.whole
    if path[:1] == "/":
        segments = path.split("/")
    else:
        segments = base.directory + path.split("/")
        # urljoin drops the empty segments inside a merged path ("a//b" -> "a/b")
        segments[1:-1] = filter(None, segments[1:-1])
    resolved: list[str] = []
    for segment in segments:
        if segment == "..":
            if resolved:
                resolved.pop()
        elif segment != ".":
            resolved.append(segment)
    if segments[-1] in (".", ".."):
        resolved.append("")
    joined = "/".join(resolved) or "/"
    if joined[:1] != "/":
        joined = "/" + joined
    url = f"{base.scheme}://{base.netloc}{joined}"
    return f"{url}#{fragment}" if fragment else url


@lru_cache(maxsize=8)
def joiner(base: str) -> Joiner:
    """The page's joiner: its extraction joins the same base in several places."""
    return Joiner(base)
