"""One HTML page, decoded and parsed once, for everything that reads it.

Link extraction (``links.py``) and conversion (``convert.py``, ``extract.py``) read the
same things off a page — its text in the right charset, its tree, its ``<base href>``,
its ``<meta http-equiv=refresh>`` target — and used to do it each in its own way (the
links from bytes, without the HTTP charset). This module is the one way:

- ``decode``: bytes to text (``charset.py``: BOM, the HTTP charset, ``<meta charset>``,
  UTF-8, and a UTF-8 label the bytes contradict is not trusted);
- ``parse_html``: text to an lxml document, whatever the input (an XML declaration, which
  lxml refuses in a str; nothing parsable: an empty document);
- ``parse_tree``: the whole page even past the parser's depth limit (``depth.py``): the
  tree links are read from, by the crawler alone or, locally, by the worker that then
  bounds its nesting (``bounded``) and converts it (``pipeline/reading.py``), so links
  come out the same either way;
- ``parse_document``: decoded, parsed and bounded: the tree conversion works on;
- ``base_href`` and ``refresh_url``: what a page says about where its links resolve and
  where a redirect stub sends the reader. Each caller resolves them its own way: links
  for the frontier are normalised, links in the content keep the author's form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import lxml.html
from lxml.etree import ElementDefaultClassLookup, ParserError
from lxml.html import HtmlComment, HtmlElement, HtmlEntity, HtmlProcessingInstruction

from .charset import decode_page

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
# "5; url=next.html", "0;URL='next.html'", "url=next.html": the delay is optional.
_REFRESH_URL = re.compile(r"""^\s*(?:\d*\.?\d*\s*[;,])?\s*url\s*=\s*['"]?([^'"]+)""", re.I)


@dataclass(frozen=True)
class Document:
    """A page parsed once: its decoded text (readability re-reads it) and its tree."""

    text: str
    root: HtmlElement


def decode(body: bytes | str, encoding: str | None = None) -> str:
    """Bytes to text: BOM first, then the HTTP charset, then <meta charset>, then UTF-8."""
    if isinstance(body, str):
        return body
    return decode_page(body, encoding)


def _html_parser() -> lxml.html.HTMLParser:
    """lxml.html's parser with its element classes chosen in C. lxml.html's own asks a
    Python method which class each element it makes gets (1.9 M calls on 2,400 small
    pages, ~3 % of a worker's CPU), only to give form controls classes of their own
    (``.value``, ``.form``) that nothing here uses; every element is an HtmlElement
    here, comments, processing instructions and entities keep their lxml.html classes."""
    parser = lxml.html.HTMLParser()
    parser.set_element_class_lookup(
        ElementDefaultClassLookup(
            element=HtmlElement,
            comment=HtmlComment,
            pi=HtmlProcessingInstruction,
            entity=HtmlEntity,
        )
    )
    return parser


# Shared like lxml.html's own module-level parser: lxml locks a parser's context, so
# threads parsing at once wait for each other rather than mix their documents.
_PARSER = _html_parser()


def parse_html(text: str) -> HtmlElement:
    """Parse any HTML (broken, empty, XML-declared) into an lxml document."""
    # lxml refuses str input that still carries an XML encoding declaration.
    text = _XML_DECLARATION.sub("", text, count=1)
    try:
        return lxml.html.document_fromstring(text, parser=_PARSER)
    except (ParserError, ValueError):
        return lxml.html.document_fromstring("<html><body></body></html>", parser=_PARSER)


def parse_document(body: bytes | str, encoding: str | None = None) -> Document:
    """Decoded and parsed whole (``parse_tree``) with its nesting bounded: the tree
    conversion works on."""
    return bounded(parse_unbounded(body, encoding))


def parse_unbounded(body: bytes | str, encoding: str | None = None) -> Document:
    """Decoded and parsed whole, before the nesting is bounded: where links are read."""
    text = decode(body, encoding)
    return Document(text, parse_tree(text))


def parse_tree(text: str) -> HtmlElement:
    """The whole page, even one nesting past the parser's depth limit (``depth.py``)."""
    from .depth import parse_whole  # depth.py parses with parse_html above

    return parse_whole(text)


def bounded(page: Document) -> Document:
    """The page's tree with its nesting bounded for the renderer (in place)."""
    from .depth import bound

    bound(page.root)
    return page


def base_href(root: HtmlElement) -> str | None:
    """The first ``<base href>`` of ``root``'s document as written (only the first
    counts), if any; from any element of the tree, as the ``//base`` XPath did."""
    # iter() by tag name, not XPath: lxml answers at once for a page with no <base>
    # (the name is not in its parser's dictionary), where ``//base`` walked every node.
    for base in root.getroottree().iter("base"):
        href = base.get("href")
        if href is not None:
            return href
    return None


def meta_contents(
    root: HtmlElement,
    wanted: tuple[tuple[str, str], ...],
    metas: list[HtmlElement] | None = None,
) -> list[str]:
    """``//meta[@a='v' or @b='w' ...]/@content`` for ``wanted`` = ((a, v), (b, w), ...),
    in document order: a walk in C by tag name, without XPath's ``//`` (twice as slow on
    a big page). ``metas``: the tree's <meta> elements in document order, if known
    (``extract.page_metas``): no walk at all."""
    found = []
    for meta in root.iter("meta") if metas is None else metas:
        content = meta.get("content")
        if content is not None and any(meta.get(name) == value for name, value in wanted):
            found.append(content)
    return found


def is_refresh(element: HtmlElement) -> bool:
    return element.get("http-equiv", "").strip().lower() == "refresh"


def refresh_url(content: str) -> str | None:
    """The target of a meta refresh's ``content`` ("0; url=next.html"), as written."""
    match = _REFRESH_URL.match(content)
    target = match.group(1).strip() if match else ""
    return target or None


def refresh_target(root: HtmlElement, metas: list[HtmlElement] | None = None) -> str | None:
    """Where the page's first meta refresh with a target sends the reader, as written.
    ``metas``: as for ``meta_contents``."""
    for meta in root.iter("meta") if metas is None else metas:
        if is_refresh(meta):
            target = refresh_url(meta.get("content", ""))
            if target:
                return target
    return None
