"""Heading-aware passages of a page, for search and ``chunks.jsonl``.

A chunk is one section (the text under a heading, down to the next heading of any level),
split further when it is longer than ``MAX_CHUNK_TOKENS``. Splits fall between blocks
(paragraphs, lists, a whole code fence, a whole table), never inside one: a code example
or a table is only useful to an agent whole. A single block larger than the budget (a
very long listing) stays one chunk, over budget, rather than be cut.

Each chunk carries the path of headings above it, the page title, the page URL and the
heading's anchor (GitHub's slug rules, as ``pages/*.md`` use), so a hit can be cited and
opened at the right place. Pure functions: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .rewrite import Slugger, atx_heading, iter_lines, plain_text
from .tokens import estimate_tokens

MAX_CHUNK_TOKENS = 800
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_HTML_TABLE_OPEN = re.compile(r"^\s*<table\b", re.I)
_HTML_TABLE_CLOSE = re.compile(r"</table>\s*$", re.I)


@dataclass(frozen=True)
class Chunk:
    url: str  # the page's URL
    title: str  # the page's title
    heading_path: tuple[str, ...]  # headings above the text, outermost first (plain text)
    anchor: str  # the nearest heading's anchor on the page ("" before the first heading)
    text: str  # markdown: the heading line, then the section (or a part of it)
    tokens: int  # estimate_tokens(text)
    position: int  # 0-based, in page order

    @property
    def link(self) -> str:
        return f"{self.url}#{self.anchor}" if self.anchor else self.url

    def to_dict(self) -> dict[str, object]:
        # Spelled out, not dataclasses.asdict (which deep-copies every field: a third of
        # writing chunks.jsonl); the keys in field order, as the file has always had them.
        return {
            "url": self.url,
            "title": self.title,
            "heading_path": list(self.heading_path),
            "anchor": self.anchor,
            "text": self.text,
            "tokens": self.tokens,
            "position": self.position,
        }


def chunk_lines(chunks: Iterable[Chunk]) -> bytes:
    """The chunks as ``chunks.jsonl`` holds them: one JSON object a line."""
    return "".join(json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in chunks).encode()


def chunks_from_lines(data: bytes) -> list[Chunk]:
    """``chunk_lines`` read back (split at newlines only: a JSON string never holds one,
    but may hold U+2028 or U+0085, which ``splitlines`` would also cut at)."""
    chunks = []
    for line in data.decode("utf-8").split("\n")[:-1]:
        fields = json.loads(line)
        fields["heading_path"] = tuple(fields["heading_path"])
        chunks.append(Chunk(**fields))
    return chunks


@dataclass
class _Section:
    path: tuple[str, ...]
    anchor: str
    heading: str  # the heading line itself ("" for text before the first heading)
    blocks: list[str]


def chunk_page(
    markdown: str, url: str, title: str, max_tokens: int = MAX_CHUNK_TOKENS
) -> list[Chunk]:
    """The page's chunks in reading order."""
    chunks: list[Chunk] = []
    for section in _sections(markdown):
        for text in _pack(section, max_tokens):
            chunks.append(
                Chunk(
                    url,
                    title,
                    section.path,
                    section.anchor,
                    text,
                    estimate_tokens(text),
                    len(chunks),
                )
            )
    return chunks


def blocks(markdown: str) -> Iterator[tuple[str, bool]]:
    """The markdown as blocks (text, is_heading): paragraphs, lists, whole fences, whole
    tables (pipe tables and HTML tables, which may hold blank lines), heading lines."""
    current: list[str] = []
    in_html_table = False
    for line, in_code in iter_lines(markdown):
        bare = line.rstrip("\r\n")
        if not in_code and not in_html_table and atx_heading(bare) is not None:
            if current:
                yield "".join(current), False
                current = []
            yield line, True
            continue
        if not in_code and _HTML_TABLE_OPEN.match(bare):
            in_html_table = True
        if in_html_table and _HTML_TABLE_CLOSE.search(bare):
            in_html_table = False
            current.append(line)
            continue
        if not bare.strip() and not in_code and not in_html_table and current:
            yield "".join(current), False
            current = []
            continue
        if bare.strip() or in_code or in_html_table:
            current.append(line)
    if current:
        yield "".join(current), False


def _sections(markdown: str) -> Iterator[_Section]:
    slugs = Slugger()
    stack: list[tuple[int, str]] = []  # (level, plain heading text)
    section = _Section((), "", "", [])
    for text, is_heading in blocks(markdown):
        if not is_heading:
            section.blocks.append(text.rstrip("\n"))
            continue
        if section.heading or section.blocks:
            yield section
        found = atx_heading(text.rstrip("\r\n"))
        assert found is not None
        level, raw = found
        heading = plain_text(raw)
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        section = _Section(tuple(h for _, h in stack), slugs.slug(raw), text.rstrip("\n"), [])
    if section.heading or section.blocks:
        yield section


def _pack(section: _Section, max_tokens: int) -> Iterator[str]:
    """The section's blocks packed greedily into texts of at most ``max_tokens``; every
    part after the first repeats the heading line, so it still says what it is about."""
    head = section.heading
    parts: list[str] = [head] if head else []
    size = estimate_tokens(head)
    for block in section.blocks:
        cost = estimate_tokens(block) + 1
        if size + cost > max_tokens and _has_body(parts, head):
            yield "\n\n".join(parts)
            parts, size = ([head] if head else []), estimate_tokens(head)
        parts.append(block)
        size += cost
    if _has_body(parts, head) or (parts and not section.blocks):
        yield "\n\n".join(parts)


def _has_body(parts: list[str], head: str) -> bool:
    return len(parts) > (1 if head else 0)
