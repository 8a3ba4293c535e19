"""links: what a crawler may follow from one page."""

from __future__ import annotations

from typing import Any

import pytest
from mdcrawl import document
from mdcrawl.links import (
    LINK_TAGS,
    PageLinks,
    _is_canonical,
    _page_part,
    _target,
    extract_links,
    tree_links,
)
from mdcrawl.urls import normalize_url

from tests.support.sites import require_site

PAGE = "https://docs.example.com/guide/intro.html"


def test_links_are_absolute_normalised_in_page_order_and_deduplicated() -> None:
    doc = b"""<html><body>
      <a href="setup.html">Setup</a>
      <a href="../api/index.html#top">API</a>
      <a href="setup.html#install">Setup again</a>
      <a href="https://OTHER.example/x?utm_source=docs">Elsewhere</a>
      <a href="/guide/setup.html">Setup, absolute</a>
    </body></html>"""
    links = extract_links(doc, PAGE).links
    assert links == (
        "https://docs.example.com/guide/setup.html",
        "https://docs.example.com/api/",
        "https://other.example/x",
    )


def test_non_http_links_and_self_links_are_dropped() -> None:
    doc = """<a href="javascript:void(0)">j</a><a href="mailto:a@example.com">m</a>
      <a href="tel:+1">t</a><a href="data:text/html,x">d</a><a href="#section">anchor</a>
      <a href="">empty</a><a href="ftp://files.example.com/">ftp</a>
      <a href="http://[::1">broken</a><a href="next.html">next</a>"""
    assert extract_links(doc, PAGE).links == ("https://docs.example.com/guide/next.html",)


def test_base_href_changes_resolution() -> None:
    doc = """<html><head><base href="https://cdn.example.com/v2/"></head>
      <body><a href="page.html">p</a><a href="/root.html">r</a></body></html>"""
    page = extract_links(doc, PAGE)
    assert page.base == "https://cdn.example.com/v2/"
    assert page.links == ("https://cdn.example.com/v2/page.html", "https://cdn.example.com/root.html")


def test_relative_base_href_resolves_against_the_page_and_only_the_first_counts() -> None:
    doc = """<head><base href="../shared/"><base href="https://ignored.example/"></head>
      <a href="x.html">x</a>"""
    page = extract_links(doc, PAGE)
    assert page.base == "https://docs.example.com/shared/"
    assert page.links == ("https://docs.example.com/shared/x.html",)


def test_unusable_base_href_falls_back_to_page_url() -> None:
    page = extract_links('<base href="javascript:alert(1)"><a href="x.html">x</a>', PAGE)
    assert page.base == PAGE
    assert page.links == ("https://docs.example.com/guide/x.html",)


def test_canonical_is_returned_apart_from_links() -> None:
    doc = """<head><link rel="stylesheet" href="s.css">
      <link rel="Canonical" href="/guide/intro.html?utm_medium=x"></head>
      <a href="other.html">o</a>"""
    page = extract_links(doc, PAGE)
    assert page.canonical == "https://docs.example.com/guide/intro.html"
    assert page.links == ("https://docs.example.com/guide/other.html",)
    assert extract_links("<a href='o.html'>o</a>", PAGE).canonical is None


def test_meta_refresh_target_and_area_links_are_followed() -> None:
    doc = """<head><meta http-equiv="Refresh" content="0; URL='moved/page.html'">
      <meta http-equiv="content-type" content="text/html; charset=utf-8"></head>
      <map><area href="/map-target.html"></map>"""
    assert extract_links(doc, PAGE).links == (
        "https://docs.example.com/guide/moved/page.html",
        "https://docs.example.com/map-target.html",
    )


def test_charset_of_bytes_is_honoured_and_xhtml_strings_parse() -> None:
    latin = '<meta charset="iso-8859-1"><a href="/caf\xe9.html">x</a>'.encode("latin-1")
    assert extract_links(latin, PAGE).links == ("https://docs.example.com/caf%C3%A9.html",)
    xhtml = '<?xml version="1.0" encoding="utf-8"?><html><body><a href="a.html">a</a></body></html>'
    assert extract_links(xhtml, PAGE).links == ("https://docs.example.com/guide/a.html",)


def test_empty_or_junk_documents_yield_no_links() -> None:
    for doc in (b"", "   ", b"\x00\x01\x02", "not html at all"):
        assert extract_links(doc, PAGE).links == ()


def test_real_sphinx_page_links_stay_on_site_and_resolve() -> None:
    site = require_site("requests")
    body = (site.root / site.start.lstrip("/")).read_bytes()
    url = "http://127.0.0.1:8000" + site.start
    links = extract_links(body, url).links
    local = [link for link in links if link.startswith("http://127.0.0.1:8000/")]
    assert len(local) > 10
    assert len(set(links)) == len(links)
    assert all("#" not in link for link in links)
    assert "http://127.0.0.1:8000/index.html" not in links  # folded, and it is the page itself


def test_link_rel_navigation_is_followed_but_not_stylesheets_or_search() -> None:
    page = (
        '<html><head><link rel="index" href="genindex.html"><link rel="next" href="b.html">'
        '<link rel="stylesheet" href="s.css"><link rel="search" href="search.html">'
        '<link rel="canonical" href="a.html"></head><body></body></html>'
    )
    links = extract_links(page, "http://h/docs/a.html").links
    assert links == ("http://h/docs/genindex.html", "http://h/docs/b.html")


def test_an_href_is_read_as_its_page_whatever_its_fragment_or_its_first_element() -> None:
    # API pages hold hundreds of "#method.x" links into themselves and "other.html#x"
    # links: each page they name is one link, at the place of its first mention.
    doc = """<html><head><link rel="next" href="c.html#top"></head><body>
      <a href="#method.len">len</a><a href="b.html#x">b</a><area href="b.html#y">
      <a href="c.html">c</a><a href=" b.html ">b again</a><a href="d.html #z">d</a>
      <meta http-equiv="refresh" content="0; url=e.html#q"></body></html>"""
    assert extract_links(doc, PAGE).links == (
        "https://docs.example.com/guide/c.html",
        "https://docs.example.com/guide/b.html",
        "https://docs.example.com/guide/d.html",
        "https://docs.example.com/guide/e.html",
    )


def test_the_first_canonical_link_with_an_href_names_the_page() -> None:
    doc = """<html><head><link rel="canonical"><link rel="stylesheet" href="s.css">
      <link rel="Canonical alternate" href="/guide/intro.html?utm_source=x">
      <link rel="canonical" href="/other.html"></head><body></body></html>"""
    assert extract_links(doc, PAGE).canonical == PAGE


def _reference_links(root: Any, url: str) -> PageLinks:
    """``tree_links`` as it read a page before its short way for <a> and its <base>
    found by ``iter``: every element through ``_target``, the base through
    ``document.base_href``. The links of any page must stay what it gave."""
    href = document.base_href(root)
    resolved = normalize_url(href, url) if href is not None else None
    base = resolved if resolved is not None else url
    own = normalize_url(url)
    raw: dict[str, None] = {}
    canonical = None
    for element in root.iter(*LINK_TAGS):
        target = _target(element)
        if target is not None:
            raw.setdefault(_page_part(target), None)
        if canonical is None and element.tag == "link" and _is_canonical(element):
            canonical = element.get("href")
    seen: dict[str, None] = {}
    for target in raw:
        link = normalize_url(target, base)
        if link is not None and link != own:
            seen.setdefault(link, None)
    found = normalize_url(canonical, base) if canonical is not None else None
    return PageLinks(tuple(seen), found, base)


_BASES = [
    "",
    '<base href="https://cdn.example.com/v2/">',
    '<base target="_top"><base href="../up/">',  # the first base with an href counts
    '<base href=""><base href="/second/">',
    '<BASE HREF="sub/">',
]


@pytest.mark.parametrize("head", _BASES)
def test_the_base_href_is_the_one_document_reads(head: str) -> None:
    for where in ("head", "body"):
        doc = (
            f"<html><head>{head if where == 'head' else ''}<link rel=next href=n.html></head>"
            f"<body>{head if where == 'body' else ''}<a href=a.html>a</a>"
            f"<a href='a.html#x'>a</a><map><area href=b.html></map></body></html>"
        )
        root = document.parse_tree(doc)
        # The first <base href> of the whole document, from any element (the XPath
        # ``//base/@href`` that document.base_href's walk replaced).
        written = next(iter(root.xpath("//base/@href")), None)
        assert document.base_href(root) == written
        assert document.base_href(root[-1]) == written  # from <body>
        assert tree_links(root, PAGE) == _reference_links(root, PAGE)


@pytest.mark.parametrize("name", ["django", "cargo", "sbcl", "commons-lang3", "nodejs"])
def test_links_of_real_pages_are_what_every_element_through_target_gave(name: str) -> None:
    site = require_site(name)
    pages = sorted(site.root.rglob("*.html"))[:150]
    assert len(pages) > 20
    for path in pages:
        root = document.parse_unbounded(path.read_bytes(), None).root
        url = "http://127.0.0.1:8000/" + path.relative_to(site.root).as_posix()
        assert tree_links(root, url) == _reference_links(root, url), path


# Hrefs whose resolution may depend on more of the base than its folder, and ones that
# do not, against bases that share a folder but differ in page, query, params, fragment.
TRICKY_HREFS = (
    "x.html", "./x.html", "../up/x.html", "../../../../x", "/abs/x", "//other.example/p",
    "sub/", "x.html?q=1#f", "x;p=1", ";p", ";", "?q=2", "#frag", "", " ", "\x01?q",
    "\x1f#f", " ?q", "\tx.html", "x\ty.html", "http:x.html", "http:?q", "https:", "a:b",
    "mailto:a@b.c", ".", "..", "./", "%2e%2e/x", "x y.html", "?", "#", "\u00a0?q",
    "a #", "a\u3000#", "a\u00a0#f", "x.html? ", "http://[::1/x", "//[bad/x", "/a/../../b", "é.html",
)
FOLDER_BASES = (
    "https://docs.example.com/guide/intro.html",
    "https://docs.example.com/guide/other.html?x=1#y",
    "https://docs.example.com/guide/;p=2",
    "https://docs.example.com/guide/",
    "https://docs.example.com/guide",
    "https://docs.example.com",
    "https://docs.example.com/",
    "http://docs.example.com/guide/intro.html",
    "https://[::1/guide/x.html",
)


def test_links_resolved_by_folder_and_joiner_are_what_normalize_url_gives() -> None:
    from mdcrawl import links

    links._RESOLVED.clear()
    for _ in range(2):  # the second pass answers from the memo
        for base in FOLDER_BASES:
            folder, join = links._folder(base), links._joining(base)
            for href in TRICKY_HREFS:
                assert links._resolved(href, base, folder, join) == normalize_url(href, base), (
                    href,
                    base,
                )
    assert links._RESOLVED  # the memo was used


def test_the_folder_memo_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from mdcrawl import links

    monkeypatch.setattr(links, "_RESOLVED_MAX", 4)
    links._RESOLVED.clear()
    folder, join = links._folder(PAGE), links._joining(PAGE)
    for n in range(10):
        link = links._resolved(f"p{n}.html", PAGE, folder, join)
        assert link == normalize_url(f"p{n}.html", PAGE)
    assert len(links._RESOLVED) <= 4
