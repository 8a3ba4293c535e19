"""sitemap: urlsets, indexes, gzip, plain text, and the junk real servers return."""

from __future__ import annotations

import gzip

from mdcrawl.sitemap import MAX_URLS, parse_sitemap

URLSET = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url><loc> https://docs.example.com/b.html </loc><lastmod>2024-01-01</lastmod></url>
  <url><loc>https://docs.example.com/a/index.html</loc>
    <image:image><image:loc>https://docs.example.com/pic.png</image:loc></image:image></url>
  <url><loc>https://docs.example.com/q?x=1&amp;y=2</loc></url>
  <url><loc>https://docs.example.com/b.html#dup</loc></url>
  <url><loc>ftp://docs.example.com/file</loc></url>
  <url><loc></loc></url>
</urlset>"""

INDEX = b"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://docs.example.com/sitemap-1.xml</loc></sitemap>
  <sitemap><loc>https://docs.example.com/sitemap-2.xml.gz</loc></sitemap>
</sitemapindex>"""


def test_urlset_urls_in_order_normalised_deduplicated_http_only() -> None:
    doc = parse_sitemap(URLSET)
    assert doc.urls == (
        "https://docs.example.com/b.html",
        "https://docs.example.com/a/",
        "https://docs.example.com/q?x=1&y=2",
    )
    assert doc.sitemaps == ()


def test_index_lists_child_sitemaps() -> None:
    doc = parse_sitemap(INDEX)
    assert doc.urls == ()
    assert doc.sitemaps == (
        "https://docs.example.com/sitemap-1.xml",
        "https://docs.example.com/sitemap-2.xml.gz",
    )


def test_gzip_bodies_are_inflated() -> None:
    assert parse_sitemap(gzip.compress(URLSET)) == parse_sitemap(URLSET)
    assert parse_sitemap(gzip.compress(INDEX)).sitemaps == parse_sitemap(INDEX).sitemaps


def test_sitemap_without_namespace_still_parses() -> None:
    doc = parse_sitemap(b"<urlset><url><loc>https://e.com/x</loc></url></urlset>")
    assert doc.urls == ("https://e.com/x",)


def test_plain_text_sitemap() -> None:
    doc = parse_sitemap(b"https://e.com/one\r\n\r\nhttps://e.com/two\nnot-a-url\n")
    assert doc.urls == ("https://e.com/one", "https://e.com/two")


def test_truncated_xml_keeps_what_was_readable() -> None:
    cut = URLSET[: URLSET.index(b"<url><loc>https://docs.example.com/q")]
    assert parse_sitemap(cut).urls == (
        "https://docs.example.com/b.html",
        "https://docs.example.com/a/",
    )


def test_junk_yields_nothing_rather_than_raising() -> None:
    junk = [
        b"",
        b"   ",
        b"<html><body>Not found: https://e.com/x</body></html>",
        b"\x1f\x8b\x08\x00garbage",
        b"\x00\xff\xfe binary",
        b"<<<>>>",
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
        b"<urlset><url><loc>&e;</loc></url></urlset>",
    ]
    for body in junk:
        doc = parse_sitemap(body)
        assert doc.urls == () and doc.sitemaps == (), body


def test_url_count_is_capped() -> None:
    many = b"".join(b"<url><loc>https://e.com/p%d</loc></url>" % i for i in range(MAX_URLS + 5))
    doc = parse_sitemap(b"<urlset>" + many + b"</urlset>")
    assert len(doc.urls) == MAX_URLS
    assert doc.urls[-1] == f"https://e.com/p{MAX_URLS - 1}"


def test_gzip_bomb_is_cut_at_the_uncompressed_cap() -> None:
    head = b"<urlset><url><loc>https://e.com/first</loc></url>"
    bomb = gzip.compress(head + b" " * (60 * 1024 * 1024) + b"</urlset>")
    assert parse_sitemap(bomb).urls == ("https://e.com/first",)
