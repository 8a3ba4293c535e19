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

from .rewrite import Slugger, atx_heading, closes_fence, fence_opened, github_slug, plain_text
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


# ``json.dumps(..., ensure_ascii=False)`` builds a new encoder on every call (any
# non-default argument does): one, made once, writes the same bytes for a third less.
_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False)


def chunk_lines(chunks: Iterable[Chunk]) -> bytes:
    """The chunks as ``chunks.jsonl`` holds them: one JSON object a line."""
    encode = _LINE_ENCODER.encode
    return "".join([encode(c.to_dict()) + "\n" for c in chunks]).encode()


# What ``_LINE_ENCODER`` writes a string as (``ensure_ascii=False``: the C escaper).
_string = json.encoder.encode_basestring


def page_chunk_lines(
    markdown: str, url: str, title: str, max_tokens: int = MAX_CHUNK_TOKENS
) -> bytes:
    """``chunk_lines(chunk_page(markdown, url, title, max_tokens))``, the same bytes made
    in one pass: no Chunk, no dict per passage; each line's JSON written from its pieces
    as the encoder writes them (keys in field order, ", " and ": " between, strings by
    ``_string``, integers in decimal), the page's URL and title escaped once, each
    section's heading path and anchor once. A pool worker chunks every page it converts
    (Rust core: 30 passages a page), and encoding them one dict at a time was a third
    of it. tests/unit/test_chunk_lines.py holds both ways to the same bytes."""
    page = f'{{"url": {_string(url)}, "title": {_string(title)}, "heading_path": ['
    lines: list[str] = []
    for section in _sections(markdown):
        path = ", ".join([_string(heading) for heading in section.path])
        prefix = f'{page}{path}], "anchor": {_string(section.anchor)}, "text": '
        for text in _pack(section, max_tokens):
            ending = f'"tokens": {estimate_tokens(text)}, "position": {len(lines)}}}\n'
            lines.append(f"{prefix}{_string(text)}, {ending}")
    return "".join(lines).encode()


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
    for text, heading in _blocks(markdown):
        yield text, heading is not None


def _blocks(markdown: str) -> Iterator[tuple[str, tuple[int, str] | None]]:
    """``blocks``, each heading line with its (level, raw text) (None: not a heading).

    The lines as ``rewrite.iter_lines`` reads them (``str.splitlines``, a fence opened
    by ``rewrite.fence_opened`` and closed by ``rewrite.closes_fence``), but each test is made only
    where a cheap substring check says it can hold: a fence needs three backticks or
    tildes, a closing fence its opening run, a heading a "#" in its first four
    characters, an HTML table a "<". Every page's every line passes here once in the
    worker (Rust core's API pages: ~140 lines each), so a regex per line added up."""
    current: list[str] = []
    in_html_table = False
    fence: str | None = None
    for line in markdown.splitlines(keepends=True):
        if fence is not None:
            in_code = True
            if fence in line and closes_fence(line, fence):
                fence = None
        elif ("```" in line or "~~~" in line) and (opened := fence_opened(line)):
            fence, in_code = opened, True
        else:
            in_code = False
        bare = line.rstrip("\r\n")
        if not in_code and not in_html_table and "#" in bare[:4]:
            heading = atx_heading(bare)
            if heading is not None:
                if current:
                    yield "".join(current), None
                    current = []
                yield line, heading
                continue
        if not in_code and "<" in bare and _HTML_TABLE_OPEN.match(bare):
            in_html_table = True
        if in_html_table and "</" in bare and _HTML_TABLE_CLOSE.search(bare):
            in_html_table = False
            current.append(line)
            continue
        if in_code or in_html_table or bare.strip():
            current.append(line)
        elif current:
            yield "".join(current), None
            current = []
    if current:
        yield "".join(current), None


def _sections(markdown: str) -> Iterator[_Section]:
    slugs = Slugger()
    levels: list[int] = []  # the headings above, outermost first: their levels
    path: list[str] = []  # and their plain text
    section = _Section((), "", "", [])
    for text, found in _blocks(markdown):
        if found is None:
            section.blocks.append(text.rstrip("\n"))
            continue
        if section.heading or section.blocks:
            yield section
        level, raw = found
        heading = plain_text(raw)
        while levels and levels[-1] >= level:
            levels.pop()
            path.pop()
        levels.append(level)
        path.append(heading)
        # Slugger.slug(raw), without reading the heading's plain text a second time.
        anchor = slugs.unique(github_slug(heading))
        section = _Section(tuple(path), anchor, text.rstrip("\n"), [])
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
