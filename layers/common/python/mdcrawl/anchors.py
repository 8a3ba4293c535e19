"""Where each element id of a page lands in its markdown: the heading that holds it.

A link to ``page.html#SOME-ID`` names an element id; markdown has only heading anchors.
Before rendering, ``mark_ids`` puts an invisible marker (private-use characters) at the
first text after each element that carries an id (``id``, ``<a name>``, or ids kept by
the extractor from removed permalinks), so the marker travels through the converter
with the text it precedes. ``take_anchors`` then reads the rendered markdown line by
line: a marker in a heading belongs to that heading, any other to the heading above it
(or to the page's top, ``""``). The markers are removed; what is left is
``{id: heading slug}``, the slug GitHub-style viewers give that heading in the page
(``rewrite.Slugger``), which the assembler maps to anchors in ``docs.md`` and ``pages/``.
"""

from __future__ import annotations

import re

import lxml.etree
from lxml.html import HtmlElement

from .extract import ID_ALIASES
from .rewrite import Slugger

_OPEN, _CLOSE, _ZERO = "\ue000", "\ue001", 0xE010
_MARKER = re.compile("\ue000([\ue010-\ue019]+)\ue001")
_SPACED_MARKERS = re.compile(" (?:\ue000[\ue010-\ue019]+\ue001)+(?= )")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_BLOCK = re.compile("\x02(\\d+)\x03")  # a placeholder for fenced code or an HTML table


def mark_ids(region: HtmlElement) -> list[tuple[str, ...]]:
    """Mark the region's ids in its text; returns the ids of each marker, by number."""
    groups: list[tuple[str, ...]] = []
    pending: list[str] = []
    for event, element in lxml.etree.iterwalk(region, events=("start", "end")):
        if event == "start":
            if not isinstance(element.tag, str):
                continue
            pending += _ids(element)
            if pending and element.text and element.text.strip():
                element.text = _marked(element.text, groups, pending)
                pending = []
        elif element is not region and pending and element.tail and element.tail.strip():
            element.tail = _marked(element.tail, groups, pending)
            pending = []
    return groups


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
) -> tuple[str, dict[str, str]]:
    """Remove the markers from ``body`` and from ``blocks`` (in place); returns the body
    and ``{id: slug of the heading holding it}`` (``""``: above the first heading)."""
    if not groups:
        return body, {}
    anchors: dict[str, str] = {}
    slugs = Slugger()
    current, waiting = "", []  # markers alone on a line wait for the next line with text
    out = []
    for line in body.split("\n"):
        found = _MARKER.findall(line)
        if found:
            line = _MARKER.sub("", _SPACED_MARKERS.sub("", line))
        for index in _BLOCK.findall(line):
            found += _MARKER.findall(blocks[int(index)])
            blocks[int(index)] = _MARKER.sub("", blocks[int(index)])
        heading = _HEADING.match(line)
        if heading:
            current = slugs.slug((heading[1] or "").strip())
        if found and not line.strip():
            waiting += found
            continue
        if line.strip():
            for marker in (*waiting, *found):
                for element_id in groups[_number(marker)]:
                    anchors.setdefault(element_id, current)
            waiting = []
        out.append(line)
    for marker in waiting:
        for element_id in groups[_number(marker)]:
            anchors.setdefault(element_id, current)
    return "\n".join(out), anchors


def _number(marker: str) -> int:
    return int("".join(str(ord(ch) - _ZERO) for ch in marker))


def anchors_key(markdown_key: str) -> str:
    """Where the process step keeps a page's ``{id: slug}`` beside its markdown blob."""
    return markdown_key.removesuffix(".md") + ".anchors.json"
