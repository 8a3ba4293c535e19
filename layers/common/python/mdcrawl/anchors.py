"""Where each element id of a page lands in its markdown: the heading that holds it.

A link to ``page.html#SOME-ID`` names an element id; markdown has only heading anchors.
Before rendering, ``mark_ids`` puts an invisible marker (private-use characters) at the
first text after each element that carries an id (``id``, ``<a name>``, or ids kept by
the extractor from removed permalinks), so the marker travels through the converter
with the text it precedes. ``take_anchors`` then reads the rendered markdown line by
line: a marker in a heading belongs to that heading, any other to the heading above it
(or to the page's top). The markers are removed; what is left is ``{id: (heading text,
occurrence)}`` (the second "Parameters" heading is ``("Parameters", 1)``, the page's top
``("", 0)``), which the assembler maps to that heading's anchors in ``docs.md`` and
``pages/``: slugging is left to it, which slugs every heading anyway.
"""

from __future__ import annotations

import re
from typing import Any

import lxml.etree
from lxml.html import HtmlElement

from .extract import ID_ALIASES

HeadingRef = tuple[str, int]  # a heading's text and how many before it had that text
TOP: HeadingRef = ("", 0)

_OPEN, _CLOSE, _ZERO = "\ue000", "\ue001", 0xE010
_MARKER = re.compile("\ue000([\ue010-\ue019]+)\ue001")


def mark_ids(region: HtmlElement) -> list[tuple[str, ...]]:
    """Mark the region's ids in its text; returns the ids of each marker, by number."""
    slots: dict[tuple[HtmlElement, bool], list[str]] = {}  # (element, its tail?) -> ids
    for element in _with_ids(region):
        if element is region and not _OWN_ID(region):
            continue  # a region that is an <a name> is no anchor inside itself
        ids = _ids(element)
        slot = _slot_in(element) or _slot_after(element, region)
        if ids and slot is not None:
            slots.setdefault(slot, []).extend(ids)
    groups: list[tuple[str, ...]] = []
    for (element, tail), ids in slots.items():
        if tail:
            element.tail = _marked(element.tail, groups, ids)
        else:
            element.text = _marked(element.text, groups, ids)
    return groups


def _with_ids(region: HtmlElement) -> list[HtmlElement]:
    """``descendant-or-self::*[@id or @alias or (self::a and @name)]``, in document
    order, by a walk of the element objects the conversion holds: libxml2 evaluates that
    predicate for each element slower than Python reads its attribute names (three big
    pages: 46 -> 22 ms). The region is kept only for an id of its own
    (``_OWN_ID``)."""
    found = []
    for element in region.iter(_ELEMENTS):
        names = element.keys()  # one call: most elements have no attribute at all
        if names and (
            "id" in names or ID_ALIASES in names or "name" in names and element.tag == "a"
        ):
            found.append(element)
    return found


_ELEMENTS = lxml.etree.Element  # iter() filter: elements only, no comments or PIs
_OWN_ID = lxml.etree.XPath(f"boolean(self::*[@id or @{ID_ALIASES}])")


def _slot_in(element: HtmlElement) -> tuple[HtmlElement, bool] | None:
    """The first text inside the element (document order, tails of children aside)."""
    for node in element.iter():
        if isinstance(node.tag, str) and node.text and node.text.strip():
            return node, False
    return None


def _slot_after(element: HtmlElement, region: HtmlElement) -> tuple[HtmlElement, bool] | None:
    """The first text after an element without any (``<a name="x"></a>``)."""
    node = element
    while node is not None and node is not region:
        if node.tail and node.tail.strip():
            return node, True
        for sibling in node.itersiblings():
            slot = _slot_in(sibling)
            if slot is not None:
                return slot
            if sibling.tail and sibling.tail.strip():
                return sibling, True
        node = node.getparent()
    return None


def _ids(element: HtmlElement) -> list[str]:
    attrib = element.attrib
    if not attrib:
        return []
    found = [attrib.get("id"), attrib.get("name") if element.tag == "a" else None]
    found += (attrib.get(ID_ALIASES) or "").split()
    return [i.strip() for i in found if i and i.strip()]


def _marked(text: str, groups: list[tuple[str, ...]], pending: list[str]) -> str:
    body = text.lstrip()
    digits = "".join(chr(_ZERO + int(d)) for d in str(len(groups)))
    groups.append(tuple(pending))
    return f"{text[: len(text) - len(body)]}{_OPEN}{digits}{_CLOSE}{body}"


def take_anchors(
    body: str, blocks: list[str], groups: list[tuple[str, ...]]
) -> tuple[str, dict[str, HeadingRef]]:
    """Remove the markers from ``body`` and from ``blocks`` (in place); returns the body
    and ``{id: the heading holding it}`` (``TOP``: above the first heading).

    Headings, markers and block placeholders are found by fast scans for their first
    character and then read in document order: the body can be thousands of lines."""
    if not groups:
        return body, {}
    anchors: dict[str, HeadingRef] = {}
    seen: dict[str, int] = {}
    current, waiting = TOP, []  # markers alone on a line, before a heading, wait for it
    for _, kind, match in sorted(_tokens(body), key=_position):
        if isinstance(match, str):  # a heading's line
            text = _heading_text(match)
            current = (text, seen.get(text, 0))
            seen[text] = current[1] + 1
            _assign([*waiting, *_MARKER.findall(match)], current, groups, anchors)
            waiting = []
        elif kind == "marker":
            if _alone_before_heading(body, match):
                waiting.append(match[1])
            else:
                _assign([match[1]], current, groups, anchors)
        else:
            index = int(match[1])
            if _OPEN in blocks[index]:
                _assign(_MARKER.findall(blocks[index]), current, groups, anchors)
                blocks[index] = _MARKER.sub("", blocks[index])
    _assign(waiting, current, groups, anchors)
    return _MARKER.sub("", body), anchors


def _tokens(body: str) -> list[tuple[int, str, Any]]:
    """Heading lines, markers (not those on a heading's line: the heading takes them) and
    block placeholders, with their positions."""
    found: list[tuple[int, str, Any]] = []
    starts = [0] if _HEADING_START.match("\n" + body[:8]) else []
    starts += [m.start() + 1 for m in _HEADING_START.finditer(body)]
    for start in starts:
        end = body.find("\n", start)
        found.append((start, "heading", body[start : end if end >= 0 else len(body)]))
    headings = set(starts)
    for kind, pattern, char in (("marker", _MARKER, _OPEN), ("block", _BLOCK, "\x02")):
        at = body.find(char)
        while at >= 0:
            match = pattern.match(body, at)
            on_heading = kind == "marker" and body.rfind("\n", 0, at) + 1 in headings
            if match is not None and not on_heading:
                found.append((at, kind, match))
            at = body.find(char, at + 1)
    return found


def _position(token: tuple[int, str, Any]) -> int:
    return token[0]


def _heading_text(line: str) -> str:
    """An ATX heading's text as ``rewrite.headings`` reads it: no markers, no closing #s."""
    text = line.lstrip(" ").lstrip("#")
    if _OPEN in text:
        text = _MARKER.sub("", text)
    text = text.strip(" \t")
    if text.endswith("#"):
        text = _CLOSING_HASHES.sub("", " " + text).strip(" \t")
    return text


_CLOSING_HASHES = re.compile(r"(?:[ \t]+#+)?[ \t]*$")
_HEADING_START = re.compile(r"\n {0,3}#{1,6}(?:[ \t]|$)", re.MULTILINE)
_BLOCK = re.compile("\x02(\\d+)\x03")
_NEXT_IS_HEADING = re.compile(r"(?:[ \t]*\n)+ {0,3}#{1,6}(?:[ \t]|$)")


def _alone_before_heading(body: str, marker: re.Match[str]) -> bool:
    """A marker with no text on its line, and a heading as the next line of text."""
    start = body.rfind("\n", 0, marker.start()) + 1
    end = body.find("\n", marker.end())
    end = len(body) if end < 0 else end
    if _MARKER.sub("", body[start:end]).strip():
        return False
    return _NEXT_IS_HEADING.match(body, end) is not None


def _assign(
    markers: list[str],
    heading: HeadingRef,
    groups: list[tuple[str, ...]],
    anchors: dict[str, HeadingRef],
) -> None:
    for marker in markers:
        for element_id in groups[_number(marker)]:
            anchors.setdefault(element_id, heading)


def _number(marker: str) -> int:
    return int("".join(str(ord(ch) - _ZERO) for ch in marker))


