"""The quality report of a crawl: what each page's markdown may have wrong, and the sums.

Per page (a line of ``manifest.jsonl``): words, estimated tokens (``tokens.py``) and
``warnings``, ``{kind: count}`` with only the kinds that apply:

- ``repeated_lines``: lines (outside code) that also stand on at least half of the
  site's pages: navigation, banners or footers the extraction kept (possible chrome);
- ``empty`` (1) or ``near_empty`` (its word count): a page with no or few words;
- ``unbalanced_fences`` (1): a code fence that is never closed;
- ``raw_html_lines``: lines holding raw HTML (a table GFM could not hold, a stray tag);
- ``unresolved_links``: links to a page of the bundle whose fragment names no heading
  or element of it (they point at the page's top instead).

Lines repeated across pages are found without holding the site in memory: the first
``SAMPLE_PAGES`` pages in reading order nominate lines (by hash) seen on at least half
of them; every page then counts its lines among those.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator

from .rewrite import segments

SAMPLE_PAGES = 200
REPEATED_SHARE = 0.5  # of the sampled pages
MIN_PAGES = 3  # a line on fewer pages is never "repeated across the site"
MIN_LINE_CHARS = 16  # shorter lines ("Parameters", "Returns:") repeat for good reasons
NEAR_EMPTY_WORDS = 20

_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
# "<" not after a backslash (the lookbehind after the "<": a pattern led by a literal is
# searched for at C speed, one led by a lookbehind tried at every character)
_RAW_HTML = re.compile(r"<(?<!\\<)(?:/?[A-Za-z][\w-]*(?:\s[^<>]*)?/?|!--.*?--)>")
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>")
_WORDY = re.compile(r"[^\W\d_]{3}")


def prose_lines(markdown: str) -> Iterator[str]:
    """The stripped, non-empty lines outside fenced code."""
    for text, in_code in segments(markdown):
        if not in_code:
            for line in text.split("\n"):
                line = line.strip()
                if line:
                    yield line


def _countable(line: str) -> bool:
    return len(line) >= MIN_LINE_CHARS and _WORDY.search(line) is not None


class RepeatedLines:
    """Nominates the lines that stand on many pages, from a sample of the site."""

    def __init__(self) -> None:
        self._seen: Counter[int] = Counter()
        self._sampled = 0
        self._repeated: frozenset[int] | None = None

    def sample(self, markdown: str) -> None:
        if self._sampled < SAMPLE_PAGES:
            self.add_sample(line_hashes(markdown))

    def add_sample(self, hashes: frozenset[int]) -> None:
        """``sample`` of a page whose ``line_hashes`` were taken elsewhere (a forked
        process: ``hash`` is the same there)."""
        if self._sampled >= SAMPLE_PAGES:
            return
        self._sampled += 1
        self._seen.update(hashes)

    def repeated(self) -> frozenset[int]:
        if self._repeated is None:
            least = max(MIN_PAGES, REPEATED_SHARE * self._sampled)
            self._repeated = frozenset(h for h, n in self._seen.items() if n >= least)
            self._seen.clear()
        return self._repeated

    def count(self, markdown: str) -> int:
        repeated = self.repeated()
        if not repeated:
            return 0
        if hash("") in repeated:  # never for a real site: below, empty lines are looked up
            return sum(1 for line in prose_lines(markdown) if hash(line) in repeated)
        # Every line of the page's prose looked up in C (map): the empty ones cannot be
        # among the repeated, whose hashes are of lines of MIN_LINE_CHARS and more.
        found = repeated.__contains__
        return sum(
            sum(map(found, map(hash, map(str.strip, text.split("\n")))))
            for text, in_code in segments(markdown)
            if not in_code
        )


def line_hashes(markdown: str) -> frozenset[int]:
    """The hashes of the page's lines that may count as repeated across the site."""
    return frozenset(hash(line) for line in prose_lines(markdown) if _countable(line))


def page_warnings(
    markdown: str, words: int, repeated_lines: int, unresolved_links: int
) -> dict[str, int]:
    """The warnings of one page's markdown (as written to its file)."""
    warnings: dict[str, int] = {}
    if repeated_lines:
        warnings["repeated_lines"] = repeated_lines
    if words == 0:
        warnings["empty"] = 1
    elif words < NEAR_EMPTY_WORDS:
        warnings["near_empty"] = words
    if unclosed_fence(markdown):
        warnings["unbalanced_fences"] = 1
    raw = raw_html_lines(markdown)
    if raw:
        warnings["raw_html_lines"] = raw
    if unresolved_links:
        warnings["unresolved_links"] = unresolved_links
    return warnings


def unclosed_fence(markdown: str) -> bool:
    """Whether the last code fence runs to the end of the text without closing."""
    parts = segments(markdown)
    if not parts or not parts[-1][1]:
        return False
    lines = parts[-1][0].rstrip("\n").split("\n")
    opener = _FENCE.match(lines[0])
    closer = _FENCE.match(lines[-1]) if len(lines) > 1 else None
    if opener is None or closer is None or closer["rest"].strip():
        return True
    fence, end = opener["fence"], closer["fence"]
    return end[0] != fence[0] or len(end) < len(fence)


_FENCE = re.compile(r"^(?:[ \t]*>)*[ \t]*(?P<fence>`{3,}|~{3,})(?P<rest>.*)$")


def raw_html_lines(markdown: str) -> int:
    """Lines outside code holding an HTML tag (autolinks and escaped ``\\<`` are not)."""
    count = 0
    for line in _prose_lines_with("<", markdown):
        if "<" in line:
            bare = _INLINE_CODE.sub("", line) if "`" in line else line
            bare = _AUTOLINK.sub("", bare) if ":" in bare else bare
            count += _RAW_HTML.search(bare) is not None
    return count


def summarize(warnings: Iterable[dict[str, int]]) -> dict[str, int]:
    """How many pages have each kind of warning."""
    pages: Counter[str] = Counter()
    for found in warnings:
        pages.update(found.keys())
    return dict(sorted(pages.items()))


def _prose_lines_with(mark: str, markdown: str) -> Iterator[str]:
    """The stripped lines outside fenced code holding ``mark``: ``prose_lines`` with the
    stretches and lines without it skipped at C speed (most have no tag)."""
    for text, in_code in segments(markdown):
        if not in_code and mark in text:
            for line in text.split("\n"):
                if mark in line:
                    yield line.strip()
