"""Bound how deep a parsed page nests, so recursive renderers cannot overflow the stack.

The markdown renderer (markdownify) recurses once per level, about five Python frames a
level: a page of 100,000 nested ``<div>`` (legal HTML, and a cheap trap) raised
RecursionError and was lost as ``conversion_error``. Real documentation nests a few dozen
levels. Below ``MAX_DEPTH`` every element that holds other elements is unwrapped (its
text moves up into the element at the limit); elements without element children (a
paragraph, a link, a code span) are kept, so the text reads the same and only the
deepest structure flattens. The walks are iterative (lxml's iterwalk) and visit each
element once: linear in the size of the page.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from html.parser import HTMLParser

from lxml import etree
from lxml.html import HtmlElement

from .document import parse_html

MAX_DEPTH = 120
# libxml2 stops parsing at 256 levels ("Excessive depth in document") and drops the rest
# of the page; a tree that deep was cut short, so the text is capped before parsing again.
PARSER_DEPTH = 250  # a tree reaching this deep was (almost surely) cut short
TEXT_DEPTH = 200
LONG_BLANKS = 256
_LONG_BLANKS = re.compile(rf"[\t ]{{{LONG_BLANKS},}}")
_LONG_TEXTS = etree.XPath(f"descendant::text()[string-length() >= {LONG_BLANKS}]")
_PREFORMATTED = frozenset({"pre", "textarea", "listing", "xmp", "plaintext"})
_VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    }
)


def parse_bounded(html: str) -> HtmlElement:
    """``parse_whole``, then the nesting bounded (``bound``)."""
    return bound(parse_whole(html))


def parse_whole(html: str) -> HtmlElement:
    """``document.parse_html``, but a page the parser cut short at its depth limit is
    parsed again from text whose nesting was capped first: nothing after it is lost
    (links included)."""
    root = parse_html(html)
    if _reaches(root, PARSER_DEPTH):
        root = parse_html(cap_nesting(html))
    return root


def bound(root: HtmlElement) -> HtmlElement:
    """Flatten what nests too deep and shorten long blank runs, in place (for the
    renderer); read anything else off the tree (its links) before."""
    flatten_deep(root)
    shorten_blank_runs(root)
    return root


def shorten_blank_runs(root: HtmlElement) -> int:
    """Replace each run of ``LONG_BLANKS`` or more spaces and tabs (outside preformatted
    text) by one space; returns how many texts changed. The renderer collapses such runs
    anyway, but its whitespace regex (``[\\t \\r\\n]*[\\r\\n]...``) takes quadratic
    time on a run without a newline: 100,000 spaces held a worker for minutes. Only
    texts that long are looked at (found by libxml2: no Python walk of every element)."""
    changed = 0
    for value in _LONG_TEXTS(root):
        if not _LONG_BLANKS.search(value):
            continue
        element, attribute = value.getparent(), "text" if value.is_text else "tail"
        if element is None:
            continue
        if _preformatted(element if attribute == "text" else element.getparent()):
            continue
        setattr(element, attribute, _LONG_BLANKS.sub(" ", value))
        changed += 1
    return changed


def _preformatted(element: HtmlElement | None) -> bool:
    while element is not None:
        if element.tag in _PREFORMATTED:
            return True
        element = element.getparent()
    return False


def cap_nesting(html: str, max_depth: int = TEXT_DEPTH) -> str:
    """The HTML with every tag that opens deeper than ``max_depth`` left out (its
    content kept), by the standard library's tokenizer: linear, no tree, no recursion."""
    capper = _NestingCap(max_depth)
    capper.feed(html)
    capper.close()
    return "".join(capper.out)


class _NestingCap(HTMLParser):
    def __init__(self, max_depth: int) -> None:
        super().__init__(convert_charrefs=False)
        self.max_depth = max_depth
        self.out: list[str] = []
        self.open: list[tuple[str, bool]] = []  # (tag, whether it was written)
        self.counts: Counter[str] = Counter()  # open tags by name: no scan of the stack

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raw = self.get_starttag_text() or ""
        if tag in _VOID:
            self.out.append(raw)
            return
        kept = len(self.open) < self.max_depth
        self.open.append((tag, kept))
        self.counts[tag] += 1
        self.out.append(raw if kept else " ")  # a left-out tag still parts two words

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(self.get_starttag_text() or "")

    def handle_endtag(self, tag: str) -> None:
        if self.counts[tag] == 0:
            self.out.append(f"</{tag}>")  # a stray end tag: the HTML parser decides
            return
        while self.open:
            name, kept = self.open.pop()
            self.counts[name] -= 1
            if name == tag:
                if kept:
                    self.out.append(f"</{tag}>")
                return

    def handle_data(self, data: str) -> None:
        self.out.append(data)

    def handle_entityref(self, name: str) -> None:
        self.out.append(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self.out.append(f"&#{name};")

    def handle_comment(self, data: str) -> None:
        self.out.append(f"<!--{data}-->")

    def handle_decl(self, decl: str) -> None:
        self.out.append(f"<!{decl}>")

    def handle_pi(self, data: str) -> None:
        self.out.append(f"<?{data}>")

    def unknown_decl(self, data: str) -> None:
        self.out.append(f"<![{data}]>")


def flatten_deep(root: HtmlElement, max_depth: int = MAX_DEPTH) -> int:
    """Flatten whatever nests below ``max_depth`` under ``root``; returns how many
    elements were flattened (0 for every ordinary page)."""
    limits = _elements_at(root, max_depth)
    for limit in limits:
        _flatten(limit)
    return len(limits)


def _flatten(limit: HtmlElement) -> None:
    """Make ``limit`` hold its leaf elements directly, with every text in between in
    document order (a container's edges become spaces: its words stay apart)."""
    text: list[str] = [limit.text or ""]
    leaves: list[tuple[HtmlElement, list[str]]] = []
    current = text  # where the next piece of text goes: before the first leaf, or a tail
    walker = etree.iterwalk(limit, events=("start", "end"))
    for event, element in walker:
        if element is limit:
            continue
        if event == "end":
            current.append(element.tail or "")
        elif _holds_elements(element):
            current += [" ", element.text or ""]
        else:
            current = []
            leaves.append((element, current))
            walker.skip_subtree()
    for child in list(limit):
        limit.remove(child)
    limit.text = "".join(text)
    for leaf, tail in leaves:
        limit.append(leaf)
        leaf.tail = "".join(tail)


def _elements_at(root: HtmlElement, depth: int) -> list[HtmlElement]:
    """Elements exactly ``depth`` levels below ``root`` that have element children, in
    document order (an XPath that libxml2 runs level by level: no Python walk)."""
    return _levels_below(depth, "*[*]")(root)


def _reaches(root: HtmlElement, depth: int) -> bool:
    """Does anything (an element, a comment) nest ``depth`` levels below ``root``?"""
    return bool(_levels_below(depth, "node()[not(self::text())]")(root))


@lru_cache(maxsize=8)
def _levels_below(depth: int, last: str) -> etree.XPath:
    return etree.XPath("/".join(["*"] * (depth - 1) + [last]))


def _holds_elements(element: HtmlElement) -> bool:
    return isinstance(element.tag, str) and any(isinstance(c.tag, str) for c in element)
