"""linkjoin's fast path gives exactly what urljoin (and urldefrag) give: on every link of
real docs trees, against bases of every shape, on edge cases and on random strings."""

from __future__ import annotations

import random
from pathlib import Path
from urllib.parse import urldefrag, urljoin

from lxml import html
from mdcrawl.linkjoin import Joiner

# Real docs trees the suite installs (`make fixtures`), of several generators.
_TREES = (
    "/usr/share/doc/rust-doc/html/core",
    "/usr/share/doc/python-django-doc/html",
    "/usr/share/doc/python3.11/html",
    "/usr/share/doc/nodejs/api",
    "/usr/share/gtk-doc/html/glib",
    "/usr/share/doc/libcommons-lang3-java/api",
    "/usr/share/doc/libghc-aeson-doc/html",
    "/usr/share/doc/sbcl/sbcl-internals",
)
_BASES = (
    "http://127.0.0.1:8000/a/b/page.html",
    "https://docs.example/a/b/",
    "https://docs.example",
    "https://docs.example/",
    "http://h/a//b/c.html",
    "http://h/a/b/page.html?q=1",
    "http://h/a/b/page.html?",
    "http://h/a/b/page.html#top",
    "http://h/a/b;p=1",
    "http://h/a;x/b.html",
    "http://user@h:8080/x/./y/../z.html",
    "HTTP://H/a/B.html",
    "http://h/%7Ea/b c/d.html",
    "http://[::1]:8000/a/b.html",
    "file:///usr/share/doc/x.html",
    "ftp://h/a/b",
    "",
    "relative/base.html",
    "mailto:someone@example.com",
)
_EDGE_HREFS = (
    "", "#", "##", "#a", "#a#b", "a#", "a##", ".", "..", "./", "../", "../..", "../../..",
    "/", "//", "///", "//h", "//h/a", "/a/../../b", "a/./b/../c", "a//b", "a///b/", "/a//b",
    "./a/.", "a/..", "..a", "a..", "...", "a/.../b", "?", "?q", "a?b#c", "a;b", ";", "a;b/c",
    "a:b", "1:b", "http:", "http:a", "http:/a", "http://", "http://h", "http://h#", "http://h/",
    "http://h/a#", "http://h:/a", "http://h:80", "http://h.a.b/c", "https://h/a", "HTTP://h/a",
    "http://H/A", "http://h/a/../b", "http://h//a", "http://u@h/a", "http://[::1]/a",
    "http://h/a b", " a", "a ", "\ta", "a\tb", "a\nb", "a\rb", "\x00a", "a\x00", "é", "a/é",
    "#é", "%", "%zz", "%7e", "a%2Fb", "~user", "a(b)c", "a'b", "a!b$c&d*e+f,g=h@i", "@",
    "mailto:x@y", "javascript:void(0)", "data:text/plain,x", "ftp://h/a", "file:///a",
    "\\a", "a\\b", "http:\\\\h\\a", "#a b", "#a\tb", "#\x7f", "#\u00a0", "https://h/a#b c",
)


def _hrefs(root: str, limit: int = 30) -> list[str]:
    found: list[str] = []
    for path in sorted(Path(root).rglob("*.html"))[:limit]:
        tree = html.fromstring(path.read_bytes())
        found += [str(h) for h in tree.xpath("//a/@href | //img/@src | //link/@href")]
    return found


def _check(base: str, hrefs: list[str]) -> int:
    """Both functions agree with the standard library on every href; returns how many
    the fast path answered."""
    joiner = Joiner(base)
    fast = 0
    for href in hrefs:
        try:
            expected = urljoin(base, href)
        except ValueError:
            expected = None
        if expected is None:
            try:
                joiner.join(href)
            except ValueError:
                continue
            raise AssertionError(f"urljoin({base!r}, {href!r}) raises, the joiner did not")
        fast += joiner._fast(href) is not None
        assert joiner.join(href) == expected, (base, href)
        assert joiner.join_defragged(href) == urldefrag(expected).url, (base, href)
    return fast


def test_real_links_resolve_as_urljoin_resolves_them() -> None:
    hrefs = sorted({h for tree in _TREES for h in _hrefs(tree)})
    assert len(hrefs) > 5_000  # the trees are there: a real sample
    for base in _BASES:
        fast = _check(base, hrefs)
        if base.startswith(("http://", "https://")) and "[" not in base:
            assert fast > len(hrefs) * 0.9, base  # nearly every real link takes the path
    for tree in _TREES[:3]:  # each page's links against that page's own URL
        for path in sorted(Path(tree).rglob("*.html"))[:20]:
            page = f"http://127.0.0.1:8000/{path.relative_to('/usr/share/doc')}"
            _check(page, html.fromstring(path.read_bytes()).xpath("//a/@href"))


def test_edge_cases_resolve_as_urljoin_resolves_them() -> None:
    for base in _BASES:
        _check(base, list(_EDGE_HREFS))


def test_random_references_resolve_as_urljoin_resolves_them() -> None:
    """Strings built from the characters that matter to a URL parser."""
    rng = random.Random(13)
    alphabet = list("ab./#?;:@%-_~=&+!'() \t") + ["..", "//", "http://", "https://", "é", "\x7f"]
    hrefs = ["".join(rng.choices(alphabet, k=rng.randint(1, 9))) for _ in range(5_000)]
    for base in _BASES:
        _check(base, hrefs)
