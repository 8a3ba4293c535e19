"""A BeautifulSoup tree built straight from an lxml region (``soup_from_lxml``).

Serialising the region and parsing it again costs more than the conversion itself; this
builds the same tree directly. It relies on bs4 internals (``Tag.__new__``, the soup's
namespaces), which is why ``beautifulsoup4`` is pinned and a unit test compares the
result with bs4's own parse (tests/unit/test_markdown.py).
"""

from __future__ import annotations

import re
from typing import Any

import lxml.html
from bs4 import BeautifulSoup, NavigableString, Tag
from lxml.html import HtmlElement


def soup_from_lxml(region: HtmlElement) -> BeautifulSoup:
    """The region as BeautifulSoup sees it, built straight from the lxml tree.

    Serialising the region and parsing it again costs more than the conversion itself
    (bs4 handles every start tag, end tag and string in Python). Built here instead:
    the same tree bs4's lxml builder makes of ``tostring(region)`` - html > body >
    region and its tail, whitespace-only strings collapsed outside <pre>, the string
    classes of script/style/rt - without the round trip. Anything unusual (processing
    instructions, entities, a nested html/body, a tree too deep) takes the round trip.
    """
    soup = BeautifulSoup("", "lxml", multi_valued_attributes=None)
    try:
        _SoupBuilder(soup).build(region)
    except (_Unusual, RecursionError):
        html = lxml.html.tostring(region, encoding="unicode")
        # Class lists stay plain strings: splitting every one costs more than it serves.
        soup = BeautifulSoup(html, "lxml", multi_valued_attributes=None)
    return soup


class _Unusual(Exception):
    """A node the direct build does not reproduce faithfully."""


_STRUCTURE_TAGS = {"html", "head", "body", "frameset"}
_ASCII_SPACES = frozenset(BeautifulSoup.ASCII_SPACES)
_TAG_TEMPLATES: dict[str, dict[str, object]] = {}
_TEMPLATES_KEPT = 1024  # a page may invent any number of tag names: memory stays bounded
_LINKS = ("parent", "previous_element", "next_element", "previous_sibling", "next_sibling")


# libxml2's HTML serialiser URI-escapes these attributes (spaces, non-ASCII: %XX) and
# trims their leading blanks; the round trip's soup holds them so, and so does this one.
_URI_ATTRS = {"href", "src", "action", "name"}
_URI_UNSAFE = re.compile(r"[^\x21-\x7e]")


def _serialised_attributes(el: HtmlElement) -> dict[str, str]:
    """The element's attributes as they come back from ``tostring`` and a parse."""
    # Only <a name> is escaped by tag: a span stands in for any other element (a <td>
    # or <li> outside its parent would not survive the parse).
    copy = lxml.html.Element("a" if el.tag == "a" else "span", dict(el.attrib))
    holder = lxml.html.Element("div")
    holder.append(copy)
    return dict(lxml.html.fragment_fromstring(lxml.html.tostring(holder))[0].attrib)


class _SoupBuilder:
    def __init__(self, soup: BeautifulSoup) -> None:
        self.soup = soup
        self.builder = soup.builder
        self.containers = soup.builder.string_containers
        self.preserve = soup.builder.preserve_whitespace_tags
        self.attr_dict = soup.builder.attribute_dict_class
        self.last: object = None  # the element before the next one, in document order

    def build(self, region: HtmlElement) -> None:
        soup = self.soup
        if region.tag == "html":
            raise _Unusual("html")
        html = self._tag("html", {}, soup)
        if region.tag == "body":
            self._element(region, html, NavigableString, False)
            if region.tail:  # whitespace after </body> stays in <html>; text would not
                if region.tail.strip():
                    raise _Unusual("text after body")
                self._string(region.tail, html, NavigableString, False)
            return
        body = self._tag("body", {}, html)
        self._element(region, body, NavigableString, False)
        if region.tail:
            self._string(region.tail, body, NavigableString, False)

    def _template(self, name: str) -> dict[str, object]:
        template = _TAG_TEMPLATES.get(name)
        if template is None:
            model = Tag(self.soup, self.builder, name, None, None, {})
            template = {k: v for k, v in model.__dict__.items() if k not in _LINKS}
            del template["attrs"], template["contents"]
            template["_namespaces"] = self.soup._namespaces  # what the lxml builder passes
            if len(_TAG_TEMPLATES) < _TEMPLATES_KEPT:
                _TAG_TEMPLATES[name] = template
        return template

    def _link(self, node: Any, parent: Any) -> None:
        contents = parent.contents
        previous = contents[-1] if contents else None
        node.parent = parent
        node.previous_sibling = previous
        node.next_sibling = None
        if previous is not None:
            previous.next_sibling = node
        node.previous_element = self.last
        node.next_element = None
        if self.last is not None:
            self.last.next_element = node
        self.last = node
        contents.append(node)

    def _tag(self, name: str, attrs: Any, parent: Any) -> Tag:
        tag = Tag.__new__(Tag)
        tag.__dict__.update(self._template(name))
        tag.attrs = self.attr_dict(attrs)
        tag.contents = []
        self._link(tag, parent)
        return tag

    def _element(self, el: HtmlElement, parent: Any, container: type, keep: bool) -> None:
        """The element and everything below it, linked as bs4 links a parse: the hot
        loop of the build, so ``_tag``, ``_link`` and ``_string`` are written out here."""
        name = el.tag
        if name in _STRUCTURE_TAGS and parent is not self.soup and parent.name != "html":
            raise _Unusual(name)
        if name == "meta":  # bs4 rewrites a meta charset for output: leave that to it
            raise _Unusual(name)
        items = el.items()
        attrs: Any = items
        for key, value in items:
            if key in _URI_ATTRS and _URI_UNSAFE.search(value):
                attrs = _serialised_attributes(el)
                break
        template = _TAG_TEMPLATES.get(name) or self._template(name)
        tag = Tag.__new__(Tag)
        fields = tag.__dict__
        fields.update(template)
        fields["attrs"] = self.attr_dict(attrs)
        contents: list[Any] = []
        fields["contents"] = contents
        self._link(tag, parent)
        container = self.containers.get(name, container)
        keep = keep or name in self.preserve
        text = el.text
        if text:
            self._string(text, tag, container, keep)
        for child in el:
            if not isinstance(child.tag, str):
                raise _Unusual(repr(child))
            self._element(child, tag, container, keep)
            tail = child.tail
            if tail:
                self._string(tail, tag, container, keep)

    def _string(self, text: str, parent: Any, container: type, keep: bool) -> None:
        if not keep and _ASCII_SPACES.issuperset(text):
            text = "\n" if "\n" in text else " "
        string = str.__new__(container, text)
        string.hidden = False
        self._link(string, parent)
