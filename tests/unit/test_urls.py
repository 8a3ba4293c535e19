"""urls: normalisation, hashing, start-URL validation and scope, on real-world spellings."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from mdcrawl.errors import InvalidInput
from mdcrawl.urls import (
    MAX_URL_LENGTH,
    TRACKING_PARAMS,
    in_scope,
    is_non_page,
    normalize_url,
    scope_for,
    url_hash,
    validate_start_url,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Docs.Python.ORG/3/", "http://docs.python.org/3/"),
        ("https://docs.python.org:443/3/", "https://docs.python.org/3/"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com:80/a", "https://example.com:80/a"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com/a/b#section-2", "https://example.com/a/b"),
        ("https://example.com/a/./b/../c/", "https://example.com/a/c/"),
        ("https://example.com/docs/index.html", "https://example.com/docs/"),
        ("https://example.com/docs/index.htm", "https://example.com/docs/"),
        ("https://example.com/index.html#top", "https://example.com/"),
        ("https://example.com/docs/index.html?v=2", "https://example.com/docs/?v=2"),
        # A page merely named like an index is not folded; nor is a different case.
        ("https://example.com/docs/myindex.html", "https://example.com/docs/myindex.html"),
        ("https://example.com/docs/INDEX.HTML", "https://example.com/docs/INDEX.HTML"),
        ("https://example.com/a", "https://example.com/a"),
        ("https://example.com/a/", "https://example.com/a/"),
        ("https://example.com/r\u00e9sum\u00e9", "https://example.com/r%C3%A9sum%C3%A9"),
        ("https://example.com/a%2fb", "https://example.com/a%2Fb"),
        ("https://example.com/%7Euser/", "https://example.com/~user/"),
        ("https://example.com/with space", "https://example.com/with%20space"),
        ("https://b\u00fccher.de/katalog", "https://xn--bcher-kva.de/katalog"),
        ("https://example.com./a", "https://example.com/a"),
        ("http://[::0:1]:8080/x", "http://[::1]:8080/x"),
        ("  https://example.com/padded  ", "https://example.com/padded"),
    ],
)
def test_normalize_canonical_forms(raw: str, expected: str) -> None:
    assert normalize_url(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://e.com/p?utm_source=x&utm_medium=y&utm_campaign=z", "https://e.com/p"),
        ("https://e.com/p?b=2&gclid=abc&a=1", "https://e.com/p?b=2&a=1"),
        ("https://e.com/p?fbclid=1&ref_src=twsrc", "https://e.com/p"),
        ("https://e.com/p?UTM_Source=x&q=search", "https://e.com/p?q=search"),
        ("https://e.com/p?", "https://e.com/p"),
        ("https://e.com/p?q=a%2fb", "https://e.com/p?q=a%2Fb"),
    ],
)
def test_normalize_strips_tracking_keeps_query_order(raw: str, expected: str) -> None:
    assert normalize_url(raw) == expected


def test_every_listed_tracking_param_is_stripped() -> None:
    for name in TRACKING_PARAMS:
        assert normalize_url(f"https://e.com/p?keep=1&{name}=v") == "https://e.com/p?keep=1"


@pytest.mark.parametrize(
    ("href", "base", "expected"),
    [
        ("../b/c.html#x", "https://e.com/docs/a/index.html", "https://e.com/docs/b/c.html"),
        ("c.html", "https://e.com/docs/a/", "https://e.com/docs/a/c.html"),
        ("c.html", "https://e.com/docs/a", "https://e.com/docs/c.html"),
        ("/root", "https://e.com/docs/a/", "https://e.com/root"),
        ("//cdn.e.com/x", "https://e.com/docs/", "https://cdn.e.com/x"),
        ("?page=2", "https://e.com/list", "https://e.com/list?page=2"),
        ("#only-a-fragment", "https://e.com/docs/page.html", "https://e.com/docs/page.html"),
        ("", "https://e.com/docs/index.html", "https://e.com/docs/"),
        ("HTTPS://OTHER.example/", "https://e.com/", "https://other.example/"),
    ],
)
def test_normalize_resolves_against_base(href: str, base: str, expected: str) -> None:
    assert normalize_url(href, base) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "mailto:someone@example.com",
        "javascript:void(0)",
        "data:text/html,<p>x</p>",
        "ftp://ftp.example.com/file",
        "tel:+441234",
        "file:///etc/passwd",
        "http://",
        "https://example.com:notaport/",
        "http://exa mple.com/",
        "http://[::1/",
        "",
    ],
)
def test_normalize_rejects_what_cannot_be_crawled(raw: str) -> None:
    assert normalize_url(raw) is None


def test_normalize_is_idempotent() -> None:
    samples = [
        "HTTP://Example.COM:80/a/./b/../c?b=2&a=1&utm_source=x#frag",
        "https://b\u00fccher.de/\u00e4 b/index.html",
        "https://e.com/%7euser/a%2fb?q=a+b",
    ]
    for raw in samples:
        once = normalize_url(raw)
        assert once is not None
        assert normalize_url(once) == once


def test_url_hash_is_stable_short_hex_and_distinguishes_urls() -> None:
    a = url_hash("https://e.com/a")
    assert a == url_hash("https://e.com/a")
    assert a != url_hash("https://e.com/a/")
    assert len(a) == 16 and int(a, 16) >= 0
    spellings = ["HTTPS://E.com:443/a#x", "https://e.com/a?utm_source=feed"]
    assert {url_hash(normalize_url(s) or "") for s in spellings} == {a}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://docs.python.org/3/", "https://docs.python.org/3/"),
        ("  HTTPS://Docs.Python.org/3/index.html  ", "https://docs.python.org/3/"),
        ("http://127.0.0.1:8000/docs", "http://127.0.0.1:8000/docs"),
    ],
)
def test_validate_start_url_accepts_and_normalises(raw: str, expected: str) -> None:
    assert validate_start_url(raw) == expected


@pytest.mark.parametrize(
    ("raw", "hint"),
    [
        ("", "Enter the URL"),
        ("   ", "Enter the URL"),
        ("docs.python.org/3/", "https://docs.python.org/3/"),
        ("localhost:8000/docs", "https://localhost:8000/docs"),
        ("ftp://ftp.example.com/pub", "Only http:// and https://"),
        ("mailto:me@example.com", "Only http:// and https://"),
        ("https://", "no host"),
        ("https://docs.example.com/a b", "spaces"),
        ("https://e.com/" + "a" * 3000, "limit"),
    ],
)
def test_validate_start_url_explains_the_problem(raw: str, hint: str) -> None:
    with pytest.raises(InvalidInput, match=hint.replace("?", r"\?").replace(".", r"\.")):
        validate_start_url(raw)


@pytest.mark.parametrize(
    ("start", "prefix"),
    [
        ("https://e.com/docs/v2/intro.html", "/docs/v2/"),
        ("https://e.com/docs/v2/", "/docs/v2/"),
        ("https://e.com/docs/v2", "/docs/v2/"),
        ("https://e.com/docs/3.12", "/docs/3.12/"),
        ("https://e.com/docs/page.php", "/docs/"),
        ("https://e.com/docs/index.html", "/docs/"),
        ("https://e.com", "/"),
    ],
)
def test_scope_prefix_is_the_start_pages_folder(start: str, prefix: str) -> None:
    assert scope_for(start).path_prefix == prefix


def test_scope_keeps_host_scheme_and_prefix() -> None:
    scope = scope_for("https://e.com:8443/docs/v2/intro.html")
    assert in_scope("https://e.com:8443/docs/v2/guide/setup.html", scope)
    assert in_scope("https://e.com:8443/docs/v2/", scope)
    assert not in_scope("https://e.com:8443/docs/v1/guide.html", scope)
    assert not in_scope("https://e.com:8443/docs/v2-beta/x.html", scope)
    assert not in_scope("https://e.com/docs/v2/guide.html", scope)
    assert not in_scope("http://e.com:8443/docs/v2/guide.html", scope)
    assert not in_scope("https://www.e.com:8443/docs/v2/guide.html", scope)


def test_scope_without_trailing_slash_admits_the_bare_folder() -> None:
    scope = scope_for("https://e.com/docs/v2")
    assert in_scope("https://e.com/docs/v2", scope)
    assert in_scope("https://e.com/docs/v2/api.html", scope)
    assert not in_scope("https://e.com/docs/v20/api.html", scope)


@pytest.mark.parametrize(
    "path",
    ["/d/logo.png", "/d/_static/site.css", "/d/app.js", "/d/manual.pdf", "/d/src.zip",
     "/d/font.woff2", "/d/_sources/index.rst.txt", "/d/pic.JPG"],
)
def test_scope_skips_assets_and_downloads(path: str) -> None:
    assert is_non_page(path)
    assert not in_scope("https://e.com" + path, scope_for("https://e.com/d/"))


@pytest.mark.parametrize("path", ["/d/page.html", "/d/guide/", "/d/v1.2/", "/d/api", "/d/x.php"])
def test_scope_keeps_pages(path: str) -> None:
    assert not is_non_page(path)
    assert in_scope("https://e.com" + path, scope_for("https://e.com/d/"))


def test_globs_are_relative_to_prefix_unless_rooted() -> None:
    scope = scope_for("https://e.com/docs/", include=["api/**", "/docs/guide/*.html"])
    assert in_scope("https://e.com/docs/api/x/y.html", scope)
    assert in_scope("https://e.com/docs/guide/a.html", scope)
    assert not in_scope("https://e.com/docs/guide/deep/a.html", scope)
    assert not in_scope("https://e.com/docs/tutorial/a.html", scope)


def test_single_star_stays_in_one_segment_double_star_crosses() -> None:
    one = scope_for("https://e.com/", include=["/a/*/c.html"])
    assert in_scope("https://e.com/a/b/c.html", one)
    assert not in_scope("https://e.com/a/b/x/c.html", one)
    many = scope_for("https://e.com/", include=["/a/**/c.html"])
    assert in_scope("https://e.com/a/b/x/c.html", many)
    assert in_scope("https://e.com/a/c.html", many)


def test_exclude_wins_over_include() -> None:
    scope = scope_for("https://e.com/docs/", include=["**"], exclude=["**/old/**", "changelog*"])
    assert in_scope("https://e.com/docs/new/page.html", scope)
    assert not in_scope("https://e.com/docs/api/old/page.html", scope)
    assert not in_scope("https://e.com/docs/changelog.html", scope)


def test_glob_matches_decoded_path_too() -> None:
    scope = scope_for("https://e.com/", exclude=["/r\u00e9sum\u00e9/**"])
    assert not in_scope(normalize_url("https://e.com/r\u00e9sum\u00e9/a") or "", scope)


def test_scope_for_rejects_non_http() -> None:
    with pytest.raises(InvalidInput):
        scope_for("ftp://e.com/")


def test_a_link_longer_than_any_start_url_may_be_is_not_followed():
    """A hostile page's megabyte hrefs would fill the frontier and the normaliser's
    memo: a URL over MAX_URL_LENGTH, as given or once resolved, normalises to None."""
    base = "https://x.example/docs/"
    fits = "a" * (MAX_URL_LENGTH - len(base))
    assert normalize_url(fits, base) == base + fits
    assert normalize_url(fits + "b", base) is None
    assert normalize_url(base + fits + "b") is None


# Real docs trees the suite installs (`make fixtures`): their links, resolved as a crawl
# resolves them, are what the fast path meets in practice.
_LINKED_TREES = ("/usr/share/doc/rust-doc/html/core", "/usr/share/doc/python-django-doc/html")
_EDGE_URLS = (
    "http://h/a~b/c-d_e.f",
    "http://h:8080/a/",
    "https://h:443/a",
    "http://h:80/a",
    "http://h:99999/a",
    "http://h/a/index.html",
    "http://h/a/index.htm",
    "http://h/a/myindex.html",
    "http://H/a",
    "HTTP://h/a",
    "http://h.",
    "http://h",
    "http://h/a//b",
    "http://h/a/./b",
    "http://h/a/../b",
    "http://h/.well-known/x",
    "http://h/a%7eb",
    "http://h/a b",
    "http://h/é",
    "http://h/a?b=1",
    "http://h/a#b",
    "http://1.2.3.4:1/x.y.z",
)


def _tree_links(root: str, limit: int = 300) -> list[str]:
    from pathlib import Path

    from lxml import html

    found: list[str] = []
    for path in sorted(Path(root).rglob("*.html"))[:limit]:
        page = f"http://127.0.0.1:8000/{path.relative_to(root)}"
        for href in html.fromstring(path.read_bytes()).xpath("//a/@href"):
            found.append(urljoin(page, str(href).strip()).split("#")[0])
    return found


def test_the_already_canonical_fast_path_gives_what_the_long_way_gives() -> None:
    from mdcrawl import urls

    links = [u for tree in _LINKED_TREES for u in _tree_links(tree)]
    assert len(links) > 5_000  # the trees are there: a real sample, not an empty one
    fast = 0
    for url in [*links, *_EDGE_URLS]:
        if urls._already_canonical(url):
            fast += 1
            assert urls._canonicalized(url) == url, url
    assert fast > len(links) // 2  # most real links take it: the path is worth having
