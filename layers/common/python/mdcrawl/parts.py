"""``--max-tokens N``: the document cut into ``docs-001.md``, ``docs-002.md``… each within
N estimated tokens (``mdcrawl.tokens``), plus ``docs-parts.md``, the index of the parts.

Parts are cut between pages. A page larger than a part is cut at its headings (the
chunks of ``mdcrawl.chunks``, which keep code fences and tables whole); a single block
still larger than a part (a huge listing) is cut between lines as a last resort, its
fence closed at the end of one part and opened again at the start of the next, so that
every part keeps its budget and stays valid markdown. Pure functions.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from .chunks import chunk_page
from .rewrite import iter_lines
from .tokens import estimate_tokens

PARTS_INDEX = "docs-parts.md"
MIN_PART_TOKENS = 200  # below this the header alone would not leave room for text


@dataclass(frozen=True)
class PartPage:
    url: str
    title: str
    markdown: str  # starts with the page's own heading


@dataclass
class Part:
    name: str = ""
    pieces: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    tokens: int = 0

    @property
    def text(self) -> str:
        return "".join(self.pieces)


def part_name(index: int) -> str:
    return f"docs-{index:03d}.md"


def split_parts(pages: Sequence[PartPage], max_tokens: int, site: str) -> list[Part]:
    """The parts, in reading order; each ``text`` has at most ``max_tokens`` tokens."""
    budget = max(max_tokens, MIN_PART_TOKENS)
    parts: list[Part] = []
    current = _new_part(1, site, budget)
    for page in pages:
        for piece in _page_pieces(page, budget - estimate_tokens(_header(site, 999)) - 2):
            cost = estimate_tokens(piece)
            if current.tokens + cost > budget and current.titles:
                parts.append(current)
                current = _new_part(len(parts) + 1, site, budget)
            current.pieces.append(piece)
            current.tokens = estimate_tokens(current.text)
            if page.title not in current.titles[-1:]:
                current.titles.append(page.title)
    if current.titles:
        parts.append(current)
    return parts


def parts_index(parts: Sequence[Part], site: str, max_tokens: int) -> str:
    lines = [
        f"# {site}: parts",
        "",
        f"The document in {len(parts)} parts of at most {max_tokens:,} tokens each "
        "(estimated: characters / 4), in reading order.",
        "",
    ]
    for part in parts:
        shown = ", ".join(part.titles[:8]) + (" …" if len(part.titles) > 8 else "")
        lines.append(f"- [{part.name}]({part.name}) ({part.tokens:,} tokens): {shown}")
    return "\n".join(lines) + "\n"


def _header(site: str, index: int) -> str:
    return f"<!-- {site}: {part_name(index)} -->\n"


def _new_part(index: int, site: str, budget: int) -> Part:
    header = _header(site, index)
    return Part(part_name(index), [header], [], estimate_tokens(header))


def _page_pieces(page: PartPage, room: int) -> Iterator[str]:
    """The page whole if it fits in ``room`` tokens, else its chunks, else line runs."""
    text = framed(page.markdown, page.url)
    if estimate_tokens(text) <= room:
        yield text
        return
    for chunk in chunk_page(page.markdown, page.url, page.title, max_tokens=room):
        piece = chunk.text.rstrip("\n") + "\n\n"
        if estimate_tokens(piece) <= room:
            yield piece
        else:
            yield from _line_runs(piece, room)


def framed(markdown: str, url: str) -> str:
    """The page with its source URL under its title, ending in a blank line."""
    title, _, rest = markdown.strip("\n").partition("\n")
    return f"{title}\n\nSource: {url}\n\n{rest.strip(chr(10))}\n\n"


def _line_runs(text: str, room: int) -> Iterator[str]:
    """Runs of whole lines within ``room`` tokens; a fence cut between two runs is closed
    at the end of the first and re-opened (same info string) at the start of the next."""
    run: list[str] = []
    fence_open: str | None = None  # the opening line of the fence we are inside
    reserve = 8  # tokens kept for a closing fence line
    for line, in_code in iter_lines(text):
        for piece in _fitting(line, room - reserve * 2):
            if estimate_tokens("".join(run) + piece) > room - reserve and run:
                yield _closed("".join(run), fence_open)
                run = [fence_open] if fence_open else []
            run.append(piece)
        if in_code and fence_open is None:
            fence_open = line if line.endswith("\n") else line + "\n"
        elif in_code and _is_closer(line, fence_open):
            fence_open = None
    if run:
        yield "".join(run)


def _fitting(line: str, room: int) -> Iterator[str]:
    """A line longer than ``room`` tokens in character slices (nothing else can keep it)."""
    size = max(room, 1) * 4
    for start in range(0, max(len(line), 1), size):
        yield line[start : start + size]


def _closed(run: str, opening: str | None) -> str:
    """``run``, with the fence it stops inside closed."""
    if opening is None:
        return run
    return run + ("" if run.endswith("\n") else "\n") + _marker(opening) + "\n"


def _marker(opening: str) -> str:
    stripped = opening.lstrip(" >\t")
    return stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]


def _is_closer(line: str, opening: str | None) -> bool:
    if opening is None:
        return False
    body, marker = line.strip().lstrip("> \t"), _marker(opening)
    return len(body) >= len(marker) and set(body) == {marker[0]}
