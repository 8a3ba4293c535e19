"""What a page's markdown holds, read the way a markdown renderer would.

Hand-written on purpose (a few regular expressions): the converter's markdown module is
what is being measured, so nothing of it is used here.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

import lxml.html

from .text import normal_code, phrase, tokens

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_FENCE_OPEN = re.compile(r"^((?:> ?|\s)*)(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_HEADING = re.compile(r"^(?:>\s?)*\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
# An admonition's title ("<h3>Tip</h3>") may become a blockquote label: "> **Tip:** ...".
_LABEL = re.compile(r"^(?:>\s?)+\*\*([^*\n]+?):?\*\*")
_LINK = re.compile(r"\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_EXPLICIT_ANCHOR = re.compile(r"<a\s+(?:id|name)=[\"']([^\"']+)[\"'][^>]*>\s*(?:</a>)?", re.I)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# A backslash-escaped "\<" is literal text in CommonMark, never the start of a tag.
_TAG = re.compile(r"(?<!\\)</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|(?<!\\)<!--")
_HTML_BLOCK_START = re.compile(r"^(?:>\s?|\s)*<(?:table|div|dl|pre|section|details)\b", re.I)
_BLOCK_PREFIX = re.compile(r"^(?:>\s?|\s)*")
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang|highlight)-([\w+#.-]+)")
_MD_LINK_TEXT = re.compile(r"!?\[([^\]]*)\]\((?:[^()]|\([^)]*\))*\)")
_URL_IN_LINK = re.compile(r"\]\([^)]*\)")


@dataclass(frozen=True)
class Fence:
    info: str  # the language named after the opening fence ("" = none)
    body: str


@dataclass
class Markdown:
    text: str
    fences: list[Fence]
    html_code: list[tuple[str, str]]  # (language, code) of <pre> left in raw HTML blocks
    prose_lines: list[str]  # lines outside fences, raw
    readable: str  # prose as rendered (HTML blocks read as text) + code, link URLs dropped
    headings: list[tuple[int, str]]  # (level, text as written)
    links: list[str]  # link targets, as written
    anchors: set[str] = field(default_factory=set)  # fragments this file defines
    heading_slugs: dict[str, list[str]] = field(default_factory=dict)  # phrase -> anchors


def read_markdown(text: str) -> Markdown:
    text = _FRONT_MATTER.sub("", text, count=1)  # metadata for tools, not page text
    fences, prose = split_fences(text)
    html_code, rendered = read_html_blocks("\n".join(prose))
    rendered = _URL_IN_LINK.sub("]", rendered)
    readable = "\n".join([rendered, *(f.body for f in fences)])
    headings = [(len(m.group(1)), m.group(2)) for m in map(_HEADING.match, prose) if m]
    labels = [(7, m.group(1)) for m in map(_LABEL.match, prose) if m]
    md = Markdown(
        text, fences, html_code, prose, readable, headings + labels, _links(prose)
    )
    md.anchors, md.heading_slugs = _anchors(prose, [h for h in headings])
    return md


def split_fences(markdown: str) -> tuple[list[Fence], list[str]]:
    """Fenced blocks (blockquote/list prefixes removed) and the lines outside them."""
    fences, prose, lines, i = [], [], markdown.split("\n"), 0
    while i < len(lines):
        match = _FENCE_OPEN.match(lines[i])
        if not match:
            prose.append(lines[i])
            i += 1
            continue
        prefix, ticks, info = match.groups()
        body, i = [], i + 1
        while i < len(lines) and not _closes(lines[i], prefix, ticks):
            line = lines[i]
            body.append(line[len(prefix):] if line.startswith(prefix) else line.lstrip("> "))
            i += 1
        fences.append(Fence(info, normal_code("\n".join(body))))
        i += 1
    return fences, prose


def _closes(line: str, prefix: str, ticks: str) -> bool:
    rest = line[len(prefix):] if line.startswith(prefix) else line.lstrip("> ")
    rest = rest.strip()
    return rest.startswith(ticks[0] * len(ticks)) and not rest.strip(ticks[0])


def read_html_blocks(prose: str) -> tuple[list[tuple[str, str]], str]:
    """Each raw HTML block (from a block tag to the next blank line) read as rendered
    text; and (language, code) of the <pre> inside them."""
    code: list[tuple[str, str]] = []
    out: list[str] = []
    lines, i = prose.split("\n"), 0
    while i < len(lines):
        if not _HTML_BLOCK_START.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        prefix = _BLOCK_PREFIX.match(lines[i]).group(0)  # type: ignore[union-attr]
        block = []
        while i < len(lines) and lines[i].strip(" >"):
            line = lines[i]
            block.append(line[len(prefix):] if line.startswith(prefix) else line)
            i += 1
        fragment = lxml.html.fragment_fromstring("\n".join(block), create_parent="div")
        for pre in fragment.iter("pre"):
            named = _LANG_CLASS.search(pre.get("class") or "")
            code.append((named.group(1) if named else "", normal_code(pre.text_content())))
        for element in fragment.iter():
            if element.tag != "pre" and isinstance(element.tag, str):
                element.tail = " " + (element.tail or "")
        out.append(" ".join(fragment.text_content().split()))
    return code, "\n".join(out)


def _links(prose: list[str]) -> list[str]:
    found = []
    for line in prose:
        found += _LINK.findall(line)
        found += _AUTOLINK.findall(line)
        ref = _REF_DEF.match(line)
        if ref:
            found.append(ref.group(1))
    return found


def github_slug(text: str) -> str:
    """The anchor GitHub (and most renderers) give a heading: lower-case, punctuation
    dropped, spaces to hyphens."""
    text = _heading_plain(text).strip().lower()
    kept = "".join(
        c for c in text if c in " -_" or unicodedata.category(c)[0] in ("L", "N", "M")
    )
    return kept.replace(" ", "-")


def heading_phrase(text: str) -> str:
    """A markdown heading's words as a reader sees them (link targets and titles dropped)."""
    return phrase(_heading_plain(text))


def _heading_plain(text: str) -> str:
    # Tags go, except inside code spans ("`Rc<T>`" keeps its "<T>"); before links.
    parts = _CODE_SPAN.split(_EXPLICIT_ANCHOR.sub("", text))
    text = "".join(
        part if i % 3 == 2 else ("" if i % 3 == 1 else _TAG.sub("", part))
        for i, part in enumerate(parts)
    )
    text = _MD_LINK_TEXT.sub(r"\1", text)  # links keep their text
    return text.replace("`", "").replace("*", "").replace("\\", "")


def _anchors(
    prose: list[str], headings: list[tuple[int, str]]
) -> tuple[set[str], dict[str, list[str]]]:
    anchors: set[str] = set()
    slugs: dict[str, list[str]] = {}
    seen: Counter[str] = Counter()
    for _, text in headings:
        base = github_slug(text)
        slug = base if not seen[base] else f"{base}-{seen[base]}"
        seen[base] += 1
        anchors.add(slug)
        slugs.setdefault(phrase(_heading_plain(text)), []).append(slug)
    for line in prose:
        anchors.update(_EXPLICIT_ANCHOR.findall(line))
        anchors.update(re.findall(r"\{#([\w.:-]+)\}", line))
    return anchors, slugs


def raw_html_lines(md: Markdown) -> tuple[int, int]:
    """(lines outside code that hold an HTML tag, lines outside code that hold text).
    Explicit anchors (``<a id="x"></a>``) and autolinks are markdown's own, not raw HTML."""
    raw = total = 0
    for line in md.prose_lines:
        if not line.strip():
            continue
        total += 1
        bare = _CODE_SPAN.sub("", _AUTOLINK.sub("", _EXPLICIT_ANCHOR.sub("", line)))
        raw += bool(_TAG.search(bare))
    return raw, total


def strip_link_targets(text: str) -> str:
    """Markdown with each ``](target)`` cut to ``]``: a link's URL is not its text."""
    return _URL_IN_LINK.sub("]", text)


def stream_tokens(text: str) -> list[str]:
    """Every word of the markdown in document order (link URLs dropped)."""
    return tokens(_URL_IN_LINK.sub("]", text).replace("*", ""))
