"""What a page holds, read from its HTML with a gold file: the scorer's reference.

Only lxml is used here; nothing of the converter's own extraction.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin

import lxml.html
from lxml.html import HtmlElement

from .gold import ALWAYS_IGNORED, Gold
from .text import normal_code, phrase, tokens

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# Elements a browser lays out as separate blocks (words either side never run together).
_BLOCK_TAGS = (
    "p", "div", "li", "ul", "ol", "dl", "dt", "dd", "tr", "td", "th", "table", "section",
    "pre", "br", "blockquote", "details", "summary", "article", "aside", "main", "header",
    "footer", "label", "caption", "figcaption", "hr", *HEADINGS,
)
# Blocks whose order is checked: leaves of the layout a reader reads one after another.
_ORDER_TAGS = ("p", "li", "pre", "dt", "dd", "td", "th", "blockquote", *HEADINGS)
_ORDER_MIN_WORDS = 6
_CHROME_MIN_CHARS = 12  # shorter chrome ("Next", "Home") is too common to call a leak
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang|highlight|brush:?)-?([\w+#.-]+)")
_NO_LANG = {"none", "nohighlight", "plaintext", "text", "default", "console-none"}
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([\w-]+)", re.I)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_SKIPPED_SCHEMES = ("javascript:", "file:", "data:", "about:")


@dataclass(frozen=True)
class CodeRef:
    text: str  # as a browser shows it, edges trimmed
    language: str | None  # the language the page names for it, if any


@dataclass(frozen=True)
class LinkRef:
    target: str  # absolute, fragment kept
    text: str


@dataclass
class Reference:
    url: str
    title: str  # the HTML <title>
    words: list[str]
    headings: list[str]  # phrases
    cells: list[str]  # phrases
    code: list[CodeRef]
    links: list[LinkRef]
    blocks: list[tuple[str, ...]]  # leading words of each ordered block, in page order
    chrome: set[str]  # phrases of chrome items (navigation lines, footers)
    first_heading: str = ""
    anchors: dict[str, str] = field(default_factory=dict)  # element id -> heading phrase


def parse(html: bytes | str) -> HtmlElement:
    text = html if isinstance(html, str) else decode(html)
    text = _XML_DECLARATION.sub("", text, count=1)
    return lxml.html.document_fromstring(text or "<html></html>")


def decode(body: bytes) -> str:
    """The page's text in the charset its <meta> names, else UTF-8 (what browsers and
    static servers of docs assume today)."""
    named = _META_CHARSET.search(body[:4096])
    encoding = named.group(1).decode("ascii", "replace") if named else "utf-8"
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def read_page(html: bytes | str, url: str, gold: Gold) -> Reference:
    root = parse(html)
    anchors = heading_anchors(root)
    title = " ".join((root.findtext(".//title") or "").split())
    parts = content_parts(root, gold)
    chrome_boxes = [
        e for x in gold.chrome for e in _xpath(root, x)
        if not any(_inside(part, e) for part in parts)
    ]
    region = _cleaned(_joined(parts), gold)
    code = [
        CodeRef(normal_code(pre.text_content()), named_language(pre))
        for pre in region.iter("pre")
        if pre.text_content().strip()
    ]
    _space_blocks(region)
    headings = [phrase(h.text_content()) for h in region.iter(*HEADINGS)]
    headings = [h for h in headings if h]
    region_phrase = phrase(region.text_content())
    return Reference(
        url=url,
        title=title,
        words=tokens(region.text_content()),
        headings=headings,
        cells=[c for c in (phrase(td.text_content()) for td in region.iter("td", "th")) if c],
        code=code,
        links=content_links(region, url),
        blocks=order_blocks(region),
        chrome=chrome_phrases(chrome_boxes, region_phrase),
        first_heading=headings[0] if headings else "",
        anchors=anchors,
    )


def _cleaned(region: HtmlElement, gold: Gold) -> HtmlElement:
    """The region without what a reader does not read as content."""
    for element in [e for x in (*ALWAYS_IGNORED, *gold.ignore) for e in _xpath(region, x)]:
        _drop(element)
    for element in [e for x in gold.chrome for e in _xpath(region, x)]:
        _drop(element)  # chrome nested in the content box (a page TOC, a footer row)
    _breaks_in_pre(region)
    return region


def content_parts(root: HtmlElement, gold: Gold) -> list[HtmlElement]:
    """The content: every element the first matching XPath selects (a union such as
    "header | contents" names a page whose content is in two boxes), outermost only."""
    for xpath in gold.content:
        found = _xpath(root, xpath)
        if found:
            return [e for e in found if not any(_inside(e, o) and e is not o for o in found)]
    body = root.find("body")
    return [body if body is not None else root]


def _joined(parts: list[HtmlElement]) -> HtmlElement:
    """One detached tree holding a copy of each part, in page order."""
    region = lxml.html.Element("div")
    for part in parts:
        clone = copy.deepcopy(part)
        clone.tail = None
        region.append(clone)
    return region


def _xpath(root: HtmlElement, expression: str) -> list[HtmlElement]:
    found = root.xpath(expression)
    return [e for e in found if isinstance(e, HtmlElement)]


def _inside(element: HtmlElement, container: HtmlElement) -> bool:
    return element is container or any(a is container for a in element.iterancestors())


def _drop(element: HtmlElement) -> None:
    if element.getparent() is not None:
        element.drop_tree()


def _breaks_in_pre(region: HtmlElement) -> None:
    """A <br> in a <pre> starts a new line, as a browser shows it."""
    for pre in region.iter("pre"):
        for br in list(pre.iter("br")):
            br.tail = "\n" + (br.tail or "")
            br.drop_tag()


def _space_blocks(region: HtmlElement) -> None:
    """Adjacent blocks ("<li>a</li><li>b</li>") read apart, as a browser lays them out."""
    for element in region.iter(*_BLOCK_TAGS):
        if element.tag == "pre" or any(a.tag == "pre" for a in element.iterancestors()):
            continue
        element.text = " " + (element.text or "")
        element.tail = " " + (element.tail or "")


def named_language(pre: HtmlElement) -> str | None:
    """The language the page names for a code block (class on the pre, its code, or a
    wrapper up to three levels up), or None when it names none."""
    element: HtmlElement | None = pre
    for _ in range(4):
        if element is None:
            return None
        classes = " ".join(
            [element.get("class") or "", *(c.get("class") or "" for c in element.findall("code"))]
        )
        match = _LANG_CLASS.search(classes)
        if match and match.group(1).lower() not in _NO_LANG:
            return match.group(1).lower()
        element = element.getparent()
    return None


def content_links(region: HtmlElement, url: str) -> list[LinkRef]:
    links = []
    for a in region.iter("a"):
        if any(parent.tag == "pre" for parent in a.iterancestors()):
            continue  # a fence cannot hold a link: code keeps the text, as it should
        if (a.get("href") or "").startswith("#") and _in_heading(a):
            continue  # a heading linking to its own place is a permalink, not a link
        href = (a.get("href") or "").strip()
        text = " ".join(a.text_content().split()) or " ".join(
            img.get("alt") or "" for img in a.iter("img")
        ).strip()
        if not href or href == "#" or not text or href.lower().startswith(_SKIPPED_SCHEMES):
            continue
        links.append(LinkRef(urljoin(url, href), text))
    return links


def _in_heading(element: HtmlElement) -> bool:
    return any(parent.tag in HEADINGS for parent in element.iterancestors())


def order_blocks(region: HtmlElement) -> list[tuple[str, ...]]:
    blocks = []
    for element in region.iter(*_ORDER_TAGS):
        if any(child.tag in _ORDER_TAGS for child in element.iterdescendants()):
            continue  # not a leaf: its leaves are checked instead
        words = tokens(element.text_content())
        if len(words) >= _ORDER_MIN_WORDS:
            blocks.append(tuple(words[:_ORDER_MIN_WORDS]))
    return blocks


def chrome_phrases(boxes: list[HtmlElement], region_phrase: str) -> set[str]:
    found = set()
    for box in boxes:
        for item in box.iter("a", "li", "p", "td", "span", "div", *HEADINGS):
            text = phrase(item.text_content())
            if len(text) >= _CHROME_MIN_CHARS and text not in region_phrase:
                found.add(text)
    return found


def heading_anchors(root: HtmlElement) -> dict[str, str]:
    """Each element id (or <a name>) -> the phrase of the heading that holds it: itself,
    its first heading (a section), or the last heading before it ("" = top of page)."""
    anchors: dict[str, str] = {}
    last = ""
    for element in root.iter():
        if not isinstance(element, HtmlElement):
            continue
        if element.tag in HEADINGS:
            last = phrase(element.text_content())
        name = element.get("id") or (element.get("name") if element.tag == "a" else None)
        if not name or name in anchors:
            continue
        inner = next(element.iter(*HEADINGS), None)
        if inner is None and not element.text_content().strip():
            after = element.getnext()  # <a name="x"></a><h2>..., DocBook and Texinfo's way
            inner = after if after is not None and after.tag in HEADINGS else None
        anchors[name] = phrase(inner.text_content()) if inner is not None else last
    return anchors
