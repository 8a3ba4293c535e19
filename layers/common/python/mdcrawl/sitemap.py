"""Sitemaps (sitemaps.org): page URLs in order, and the child sitemaps of an index.

Pure: the fetcher downloads, this parses. Accepts a ``<urlset>``, a ``<sitemapindex>``,
the protocol's plain-text form (one URL per line), and gzip of any of them. Junk is
tolerated rather than raised: a broken sitemap yields what could be read, or nothing.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from lxml import etree

from .urls import normalize_url

# The protocol's own limits: 50,000 URLs and 50 MB uncompressed per file. Decompression
# stops at the byte cap, so a gzip bomb costs nothing.
MAX_URLS = 50_000
MAX_UNCOMPRESSED_BYTES = 50 * 1024 * 1024
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class SitemapDoc:
    urls: tuple[str, ...] = ()  # page URLs (<urlset><url><loc>), normalised, in order
    sitemaps: tuple[str, ...] = ()  # child sitemaps (<sitemapindex><sitemap><loc>)


def parse_sitemap(xml: bytes) -> SitemapDoc:
    """What a sitemap file lists; only http(s) URLs, deduplicated, at most ``MAX_URLS``."""
    data = _gunzip(xml) if xml[:2] == GZIP_MAGIC else xml
    if not data.strip():
        return SitemapDoc()
    if not data.lstrip().startswith(b"<"):
        return SitemapDoc(urls=_first(_plain_text_urls(data)))
    root = _parse_xml(data)
    if root is None:
        return SitemapDoc()  # markup, but not a sitemap (an HTML error page, say)
    found: dict[str, list[str]] = {"url": [], "sitemap": []}
    for loc in root.iter("{*}loc"):
        # Only <url><loc> and <sitemap><loc>: extensions (image:loc, video:loc) are not pages.
        parent = loc.getparent()
        kind = etree.QName(parent).localname if parent is not None else ""
        if kind in found:
            found[kind].append(loc.text or "")
    return SitemapDoc(urls=_first(found["url"]), sitemaps=_first(found["sitemap"]))


def _gunzip(data: bytes) -> bytes:
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        return inflater.decompress(data, MAX_UNCOMPRESSED_BYTES)
    except zlib.error:
        return b""


def _parse_xml(data: bytes) -> etree._Element | None:
    # No entities, no network, no DTD: a sitemap comes from an untrusted server.
    parser = etree.XMLParser(
        recover=True, resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError:
        return None
    if root is None or not isinstance(root.tag, str):
        return None
    return root if etree.QName(root).localname in ("urlset", "sitemapindex") else None


def _plain_text_urls(data: bytes) -> list[str]:
    text = data.decode("utf-8", errors="replace")
    return [line for line in text.split() if line.lower().startswith(("http://", "https://"))]


def _first(raw: list[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in raw:
        url = normalize_url(item.strip())
        if url is not None:
            seen.setdefault(url, None)
            if len(seen) >= MAX_URLS:
                break
    return tuple(seen)
