"""document.py: one decoded, parsed page for links and conversion alike; and the local
crawl step's one parse of a fetched page (pipeline/reading.py)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest
from mdcrawl import convert
from mdcrawl.adapters.local import LocalStores, open_local_stores
from mdcrawl.document import base_href, parse_document, parse_html, refresh_target, refresh_url
from mdcrawl.links import extract_links
from mdcrawl.models import CacheEntry, CrawlOptions, FrontierItem, Job
from mdcrawl.names import job_key
from mdcrawl.pipeline import reading, templating
from mdcrawl.pipeline.fetching import body_key, crawled_page, page_links, tree_page_links
from mdcrawl.pipeline.process import ProcessDeps, markdown_cache_key, process_page
from mdcrawl.pipeline.reading import Fetched, read_fetched

URL = "http://docs.test/guide/"
# windows-1251 bytes, no <meta charset>: only the HTTP header says what they are.
CYRILLIC = "<html><body><main><h1>Дом</h1><a href='дом.html'>Дом</a></main></body></html>"
LINK = "http://docs.test/guide/" + quote("дом") + ".html"


def test_links_are_read_with_the_http_charset_as_the_converter_reads_the_page() -> None:
    body = CYRILLIC.encode("windows-1251")
    assert extract_links(body, URL, encoding="windows-1251").links == (LINK,)
    markdown = convert.convert_html(body, URL, encoding="windows-1251").markdown
    assert f"[Дом]({LINK})" in markdown


@pytest.mark.parametrize(
    ("content", "target"),
    [
        ("0; url=next.html", "next.html"),
        ("5;URL='next.html'", "next.html"),
        ("url=next.html", "next.html"),  # no delay: still a redirect
        ("3", None),  # a reload, not a redirect
    ],
)
def test_refresh_url(content: str, target: str | None) -> None:
    assert refresh_url(content) == target


def test_base_and_refresh_of_an_xml_declared_page() -> None:
    text = (
        '<?xml version="1.0" encoding="utf-8"?><html><head><base href="/v2/">'
        '<meta http-equiv="Refresh" content="0; url=intro.html"></head><body></body></html>'
    )
    root = parse_html(text)
    assert base_href(root) == "/v2/" and refresh_target(root) == "intro.html"
    assert extract_links(text, URL).links == ("http://docs.test/v2/intro.html",)


PAGES = Path(__file__).parents[1] / "fixtures" / "pages"


@pytest.mark.parametrize("path", sorted(PAGES.glob("*/*.html"))[:12], ids=lambda p: p.parent.name)
def test_a_shared_parse_gives_what_two_parses_gave(path: Path) -> None:
    page, url = path.read_bytes(), "http://docs.test/a/page.html"
    document = parse_document(page)
    assert tree_page_links(document.root, url) == page_links(page, url)
    assert convert.convert_document(document, url) == convert.convert_html(page, url)


BODY = b"<html><head><title>T</title></head><body><main><h1>Hi</h1><p>a b</p></main></body></html>"


@pytest.fixture
def stores(tmp_path: Path):
    with open_local_stores(tmp_path) as opened:
        opened.jobs.create(Job("j1", URL, CrawlOptions()))
        yield opened


def _fetched(body: bytes = BODY) -> Fetched:
    item = FrontierItem(url=URL, url_hash="u1", depth=0, order=0)
    return Fetched("j1", item, URL, body, "text/html", None)


def _deps(stores: LocalStores) -> ProcessDeps:
    return ProcessDeps(stores.blobs, stores.pages, stores.jobs, stores.events, stores.clock)


def _settle_without_template(stores: LocalStores) -> None:
    stores.blobs.put(job_key("j1", templating.TEMPLATE_NAME), templating.NO_TEMPLATE_JSON.encode())


def test_a_read_page_is_stored_linked_and_converted_once(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settle_without_template(stores)
    read = read_fetched(_fetched(), _deps(stores))
    content_hash, links = read.content_hash, read.links
    assert stores.blobs.get(body_key(content_hash)) == BODY
    assert links == page_links(BODY, URL)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("converted a second time")

    monkeypatch.setattr("mdcrawl.pipeline.process.convert_html", refuse)
    page = crawled_page("j1", _fetched().item, _entry(content_hash), from_cache=False)
    record = process_page(page, _deps(stores))
    assert b"# Hi" in (stores.blobs.get(record.markdown_key or "") or b"")


def test_a_page_the_unsettled_template_may_change_is_left_to_the_process_step(
    stores: LocalStores,
) -> None:
    read = read_fetched(_fetched(), _deps(stores))
    content_hash, links = read.content_hash, read.links
    page = crawled_page("j1", _fetched().item, _entry(content_hash), from_cache=False)
    assert links == page_links(BODY, URL)
    assert not stores.blobs.exists(markdown_cache_key(page))  # not converted twice


def test_a_page_that_fails_to_convert_still_gives_its_links(
    stores: LocalStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settle_without_template(stores)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("converter bug")

    monkeypatch.setattr(reading, "convert_document", broken)
    body = BODY.replace(b"</main>", b"<a href='next.html'>next</a></main>")
    read = read_fetched(_fetched(body), _deps(stores))
    content_hash, links = read.content_hash, read.links
    assert links == ("http://docs.test/guide/next.html",)
    entry = _entry(content_hash)
    page = crawled_page("j1", _fetched().item, entry, from_cache=False)
    assert not stores.blobs.exists(markdown_cache_key(page))  # the process step converts


def _entry(content_hash: str) -> CacheEntry:
    return CacheEntry(
        url_hash="u1",
        url=URL,
        final_url=URL,
        status=200,
        content_type="text/html",
        fetched_at=0,
        fresh_until=0,
        content_hash=content_hash,
    )


def test_a_page_nesting_past_every_limit_gives_the_same_links_either_side(
    stores: LocalStores,
) -> None:
    deep = "<div><a href='in.html'><span>in</span></a>" * 300 + "</div>" * 300
    body = f"<html><body>{deep}<a href='after.html'>after</a></body></html>".encode()
    read = read_fetched(_fetched(body), _deps(stores)).links
    alone = page_links(body, URL)
    assert read == alone
    assert alone[-2:] == ("http://docs.test/guide/in.html", "http://docs.test/guide/after.html")


def test_meta_contents_and_base_href_read_what_xpath_reads():
    """The walks by tag name find what the XPath they replace finds, in its order."""
    from mdcrawl.document import meta_contents

    page = parse_html(
        '<html><head><meta name="description" content="one">'
        '<meta property="og:description" content="two"><meta name="generator">'
        '<meta name="Generator" content="Gen 1"><base target="_top"><base href="/a/">'
        '</head><body><meta name="description" content="three"><base href="/b/">'
        "</body></html>"
    )
    wanted = (("name", "description"), ("property", "og:description"))
    xpath = "//meta[@name='description' or @property='og:description']/@content"
    assert meta_contents(page, wanted) == page.xpath(xpath) == ["one", "two", "three"]
    generators = (("name", "generator"), ("name", "Generator"))
    assert meta_contents(page, generators) == ["Gen 1"]
    assert base_href(page) == "/a/" == page.xpath("//base/@href")[0]
    assert base_href(parse_html("<p>no base</p>")) is None


FIXTURE_PAGES = sorted((Path(__file__).parents[1] / "fixtures" / "pages").glob("*/*.html"))
FORM = (
    "<html><body><form action='/s'><label>q <input name=q value=1></label>"
    "<select><option>a</select><textarea>t &amp; u</textarea><!-- note --></form>"
    "<p>text</p></body></html>"
)


@pytest.mark.parametrize("page", [FORM, *FIXTURE_PAGES], ids=lambda p: getattr(p, "stem", "form"))
def test_parse_html_builds_the_tree_lxml_html_builds(page: str | Path) -> None:
    """Its C class lookup changes which Python class an element gets, nothing else: the
    same tree, serialised byte for byte, with every element an HtmlElement."""
    import lxml.html
    from lxml.html import HtmlElement

    text = page if isinstance(page, str) else page.read_text(encoding="utf-8", errors="replace")
    ours = parse_html(text)
    # lxml refuses str input with an XML declaration; parse_html drops it first
    theirs = lxml.html.document_fromstring(re.sub(r"^\s*<\?xml[^>]*\?>", "", text))
    assert lxml.html.tostring(ours) == lxml.html.tostring(theirs)
    elements = [e for e in ours.iter() if isinstance(e.tag, str)]
    assert elements and all(type(e) is HtmlElement for e in elements)
