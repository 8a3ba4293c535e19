"""One page's scores: its markdown against the reference read from its HTML."""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass

from .links import BundlePage, LinkIndex, link_recall
from .mdread import Markdown, heading_phrase, raw_html_lines, stream_tokens, strip_link_targets
from .reference import Reference
from .text import phrase, tokens

# Higher is better for these shares; lower is better for LOWER_IS_BETTER.
METRICS = (
    "recall",
    "precision",
    "chrome_leak",
    "code_verbatim",
    "code_language",
    "code_unnumbered",
    "headings",
    "table_cells",
    "links",
    "order",
    "raw_html",
)
LOWER_IS_BETTER = frozenset({"chrome_leak", "raw_html"})
_NUMBERED = re.compile(r"^\s*(\d+)(?:\s|$|[:|.])")


@dataclass(frozen=True)
class Score:
    value: float
    n: int  # items measured (0 = nothing to measure on this page)


def score(ref: Reference, md: Markdown, page: BundlePage, index: LinkIndex) -> dict[str, Score]:
    md_words = tokens(md.readable.replace("*", ""))
    return {
        "recall": _recall(ref.words, md_words),
        "precision": _precision(ref.words, md_words),
        "chrome_leak": _chrome_leak(md, ref.chrome),
        "code_verbatim": _code_verbatim(ref, md),
        "code_language": _code_language(ref, md),
        "code_unnumbered": _code_unnumbered(ref, md),
        "headings": _headings(ref, md),
        "table_cells": _cells(ref, md_words),
        "links": Score(*link_recall(page, ref.links, index)),
        "order": _order(ref, md),
        "raw_html": _raw_html(md),
    }


def _recall(expected: list[str], got: list[str]) -> Score:
    want, have = Counter(expected), Counter(got)
    kept = sum(min(n, have[w]) for w, n in want.items())
    return Score(kept / len(expected) if expected else 1.0, len(expected))


def _precision(expected: list[str], got: list[str]) -> Score:
    """Share of the markdown's words the content region accounts for (a word the page
    has twice may appear twice; a third copy, or a word from the sidebar, is extra)."""
    want, have = Counter(expected), Counter(got)
    extra = sum(max(0, n - want[w]) for w, n in have.items())
    return Score(1 - extra / len(got) if got else 1.0, len(got))


def _chrome_leak(md: Markdown, chrome: set[str]) -> Score:
    """Share of the markdown's lines that hold a navigation item or footer line. The
    page's title heading names the page itself, even when the sidebar repeats it."""
    prose = md.prose_lines
    first = next((i for i, line in enumerate(prose) if line.strip()), None)
    if first is not None and prose[first].startswith("# "):
        prose = prose[first + 1 :]
    lines = [phrase(strip_link_targets(line)) for line in prose]
    lines = [line for line in lines if line]
    leaked = sum(any(c in line for c in chrome) for line in lines)
    return Score(leaked / len(lines) if lines else 0.0, len(lines))


def _code_bodies(md: Markdown) -> set[str]:
    return {f.body for f in md.fences}


def _code_verbatim(ref: Reference, md: Markdown) -> Score:
    """Share of the page's code blocks present, character for character, in a fence."""
    bodies = _code_bodies(md)
    kept = sum(code.text in bodies for code in ref.code)
    return Score(kept / len(ref.code) if ref.code else 1.0, len(ref.code))


def _code_language(ref: Reference, md: Markdown) -> Score:
    named = [code for code in ref.code if code.language]
    langs: dict[str, set[str]] = {}
    for fence in md.fences:
        langs.setdefault(fence.body, set()).add(fence.info.lower())
    ok = sum(bool(langs.get(code.text, set()) - {""}) for code in named)
    return Score(ok / len(named) if named else 1.0, len(named))


def _code_unnumbered(ref: Reference, md: Markdown) -> Score:
    """Share of fences without a line-number gutter the page's own code does not have."""
    originals = {code.text for code in ref.code}
    fences = [f for f in md.fences if f.body.strip()]
    bad = sum(_numbered(f.body) and f.body not in originals for f in fences)
    return Score(1 - bad / len(fences) if fences else 1.0, len(fences))


def _numbered(body: str) -> bool:
    lines = [line for line in body.split("\n") if line.strip()]
    if len(lines) < 2:
        return False
    numbers = [m.group(1) for m in map(_NUMBERED.match, lines) if m]
    if len(numbers) < 0.8 * len(lines):
        return False
    values = [int(n) for n in numbers]
    steps = sum(b - a == 1 for a, b in zip(values, values[1:], strict=False))
    return steps >= 0.8 * (len(values) - 1)


def _headings(ref: Reference, md: Markdown) -> Score:
    found = {heading_phrase(text) for _, text in md.headings}
    kept = sum(h in found for h in ref.headings)
    return Score(kept / len(ref.headings) if ref.headings else 1.0, len(ref.headings))


def _cells(ref: Reference, md_words: list[str]) -> Score:
    stream = " " + " ".join(md_words) + " "
    kept = sum(f" {cell} " in stream for cell in ref.cells)
    return Score(kept / len(ref.cells) if ref.cells else 1.0, len(ref.cells))


def _order(ref: Reference, md: Markdown) -> Score:
    """Longest increasing run of the page's blocks, by where each starts in the markdown,
    over the blocks found (blocks whose opening words are not unique are skipped)."""
    width = len(ref.blocks[0]) if ref.blocks else 0
    counts = Counter(ref.blocks)
    stream = stream_tokens(md.text)
    where: dict[tuple[str, ...], list[int]] = {}
    wanted = {b for b, n in counts.items() if n == 1}
    for i in range(len(stream) - width + 1):
        gram = tuple(stream[i : i + width])
        if gram in wanted:
            where.setdefault(gram, []).append(i)
    positions = [where[b][0] for b in ref.blocks if len(where.get(b, ())) == 1]
    if len(positions) < 3:
        return Score(1.0, 0)
    return Score(_lis(positions) / len(positions), len(positions))


def _lis(values: list[int]) -> int:
    tails: list[int] = []
    for v in values:
        i = bisect.bisect_left(tails, v)
        tails[i : i + 1] = [v]
    return len(tails)


def _raw_html(md: Markdown) -> Score:
    raw, total = raw_html_lines(md)
    return Score(raw / total if total else 0.0, total)
