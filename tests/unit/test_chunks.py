"""Heading-aware chunks and --max-tokens parts: budgets kept, fences and tables whole."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from mdcrawl.adapters.local import FileBlobStore
from mdcrawl.adapters.local import chunks as local_chunks
from mdcrawl.adapters.local.chunks import ChunkCache
from mdcrawl.chunks import (
    _ATX,
    _sections,
    atx_heading,
    blocks,
    chunk_lines,
    chunk_page,
    chunks_from_lines,
)
from mdcrawl.parts import PartPage, parts_index, split_parts
from mdcrawl.rewrite import Slugger, iter_lines, plain_text
from mdcrawl.tokens import estimate_tokens

FENCE = "```python\n" + "".join(f"x_{i} = {i}  # a line of the example\n\n" for i in range(40)) + "```"
TABLE = "| name | meaning |\n|---|---|\n" + "".join(f"| n{i} | the meaning of n{i} |\n" for i in range(40))
PAGE = (
    "# Guide\n\nIntro.\n\n## Install\n\n"
    + "\n\n".join(f"Paragraph {i} " + "word " * 40 for i in range(12))
    + f"\n\n{FENCE}\n\n{TABLE}\n### Options `--fast`\n\nThe fast option.\n\n## Usage\n\nUse it.\n"
)


def _balanced(text: str) -> bool:
    """Every fence opened in ``text`` is closed in it."""
    lines = list(iter_lines(text))
    return not lines or not lines[-1][1] or lines[-1][0].strip().startswith("```")


def test_chunks_follow_headings_with_their_path_and_anchor() -> None:
    chunks = chunk_page(PAGE, "https://h/guide.html", "Guide")
    paths = [c.heading_path for c in chunks]
    assert paths[0] == ("Guide",)
    assert ("Guide", "Install", "Options --fast") in paths
    assert paths[-1] == ("Guide", "Usage")
    options = next(c for c in chunks if c.heading_path[-1] == "Options --fast")
    assert options.anchor == "options---fast"
    assert options.link == "https://h/guide.html#options---fast"
    assert options.text.startswith("### Options `--fast`\n\nThe fast option.")
    assert [c.position for c in chunks] == list(range(len(chunks)))


def test_long_sections_split_between_blocks_never_inside_a_fence_or_table() -> None:
    chunks = chunk_page(PAGE, "u", "Guide", max_tokens=200)
    install = [c for c in chunks if c.heading_path == ("Guide", "Install")]
    assert len(install) > 3
    assert all(c.text.startswith("## Install\n\n") for c in install)  # each says what it is
    assert sum(FENCE in c.text for c in chunks) == 1  # the fence whole, in one chunk
    assert sum(TABLE.rstrip("\n") in c.text for c in chunks) == 1
    for chunk in chunks:
        assert _balanced(chunk.text)
        if FENCE not in chunk.text and TABLE.rstrip("\n") not in chunk.text:
            assert chunk.tokens <= 200
        assert chunk.tokens == estimate_tokens(chunk.text)


def test_html_tables_with_blank_lines_stay_whole() -> None:
    table = "<table>\n<tr><td>a</td></tr>\n\n<tr><td>b</td></tr>\n</table>"
    chunks = chunk_page(f"# T\n\n{'word ' * 30}\n\n{table}\n\nafter\n", "u", "T", max_tokens=20)
    assert sum(table in c.text for c in chunks) == 1


def test_parts_keep_their_budget_and_cut_between_pages_first() -> None:
    pages = [
        PartPage(f"https://h/p{i}.html", f"Page {i}", f"# Page {i}\n\n" + "text " * 150)
        for i in range(6)
    ]
    parts = split_parts(pages, 500, "Site")
    assert len(parts) >= 3
    for part in parts:
        assert estimate_tokens(part.text) <= 500
        # no page is cut: each page's heading and its last word are in the same part
        for title in part.titles:
            assert f"# {title}\n\nSource: https://h/p{title[-1]}.html" in part.text
    assert "".join(p.text for p in parts).count("# Page ") == 6
    index = parts_index(parts, "Site", 500)
    assert re.findall(r"\[(docs-\d{3}\.md)\]", index) == [p.name for p in parts]


def test_a_page_larger_than_a_part_is_cut_at_headings_and_a_huge_fence_between_lines() -> None:
    huge = "```text\n" + "".join(f"line {i} of a very long listing\n" for i in range(400)) + "```"
    page = PartPage("https://h/big.html", "Big", f"{PAGE}\n## Listing\n\n{huge}\n")
    parts = split_parts([page], 300, "Site")
    assert len(parts) > 5
    for part in parts:
        assert estimate_tokens(part.text) <= 300
        assert _balanced(part.text)
    text = "".join(p.text for p in parts)
    assert all(f"line {i} of a very long listing" in text for i in range(400))
    assert text.count("```text\n") > 2  # the listing's fence re-opened in each part it spans


def test_chunk_lines_read_back_as_the_same_chunks() -> None:
    odd = "# Odd\n\nA line\u2028separator and a next\u0085line inside one paragraph.\n"
    chunks = chunk_page(PAGE, "https://h/guide.html", "Guide") + chunk_page(odd, "u", "Odd")
    data = chunk_lines(chunks)
    assert data.decode().count("\n") == len(chunks)
    assert [json.loads(line) for line in data.decode().split("\n")[:-1]] == [
        c.to_dict() for c in chunks
    ]
    assert chunks_from_lines(data) == chunks


def test_a_page_is_chunked_once_then_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ChunkCache(FileBlobStore(tmp_path))
    made: list[str] = []
    monkeypatch.setattr(
        local_chunks,
        "page_chunk_lines",
        lambda md, url, title: made.append(url) or chunk_lines(chunk_page(md, url, title)),
    )
    cache.prepare("https://h/guide.html", "Guide", PAGE)
    cache.prepare("https://h/guide.html", "Guide", PAGE)
    lines = cache.lines("https://h/guide.html", "Guide", PAGE)
    assert made == ["https://h/guide.html"]
    assert lines == chunk_lines(chunk_page(PAGE, "https://h/guide.html", "Guide"))
    assert cache.chunks("https://h/guide.html", "Other title", PAGE)[0].title == "Other title"
    assert made == ["https://h/guide.html"] * 2  # another title: other chunks


def test_a_chunk_key_is_the_digest_earlier_versions_kept_chunks_under() -> None:
    """The key digests the chunking code, then each part after a NUL (a cache folder's
    chunks made by this code under those keys are found again), and each part counts."""
    import hashlib

    def spelled_out(*parts: str) -> str:
        digest = hashlib.sha256(local_chunks.chunking_digest().encode())
        for part in parts:
            digest.update(b"\0" + part.encode("utf-8", "surrogatepass"))
        return f"cache/chunks/{digest.hexdigest()}.jsonl"

    parts = ("https://h/a.html", "Tête", PAGE)
    assert local_chunks.chunk_key(*parts) == spelled_out(*parts)
    assert local_chunks.chunk_key(*parts) == spelled_out(*parts)  # the digest kept whole
    assert local_chunks.chunk_key("https://h/b.html", "Tête", PAGE) != spelled_out(*parts)


def test_atx_heading_reads_lines_as_the_atx_pattern_does():
    """The fast reading of a heading line agrees with the pattern it replaces on every
    line of a random sweep over the characters that matter (spaces, tabs, #s, others)."""
    rng = random.Random(13)
    alphabet = [" ", "\t", "#", "a", "`", "\x0b", "\u00a0"]
    lines = ["", "#", "## ###", "####### x", "##x", "    # x", "# a ## ##", "# a#", "#\t#"]
    lines += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10))) for _ in range(20000)]
    for line in lines:
        match = _ATX.match(line)
        assert atx_heading(line) == (None if match is None else (len(match[1]), match[2] or ""))


# The block and section reading as it was before the cheap substring checks: every line
# read through ``iter_lines`` and tested with every pattern. The chunks of any page must
# stay what it gave (chunks.jsonl and the library are compared byte for byte).
def _reference_blocks(markdown: str) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    current: list[str] = []
    in_html_table = False
    for line, in_code in iter_lines(markdown):
        bare = line.rstrip("\r\n")
        if not in_code and not in_html_table and atx_heading(bare) is not None:
            if current:
                out.append(("".join(current), False))
                current = []
            out.append((line, True))
            continue
        if not in_code and re.match(r"^\s*<table\b", bare, re.I):
            in_html_table = True
        if in_html_table and re.search(r"</table>\s*$", bare, re.I):
            in_html_table = False
            current.append(line)
            continue
        if not bare.strip() and not in_code and not in_html_table and current:
            out.append(("".join(current), False))
            current = []
            continue
        if bare.strip() or in_code or in_html_table:
            current.append(line)
    if current:
        out.append(("".join(current), False))
    return out


def _reference_sections(markdown: str) -> list[tuple[tuple[str, ...], str, str, list[str]]]:
    slugs = Slugger()
    stack: list[tuple[int, str]] = []
    out = []
    path: tuple[str, ...] = ()
    anchor, heading, body = "", "", []
    for text, is_heading in _reference_blocks(markdown):
        if not is_heading:
            body.append(text.rstrip("\n"))
            continue
        if heading or body:
            out.append((path, anchor, heading, body))
        found = atx_heading(text.rstrip("\r\n"))
        assert found is not None
        level, raw = found
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, plain_text(raw)))
        path, anchor, heading, body = tuple(h for _, h in stack), slugs.slug(raw), text.rstrip("\n"), []
    if heading or body:
        out.append((path, anchor, heading, body))
    return out


# Lines that test each check of the block reading: fences of both kinds and lengths (and
# in quotes, indented, with info strings holding backticks), closings that do and do not
# close, headings at the edges of the ATX rules, HTML tables in any case, blank lines of
# odd white space, and line breaks other than "\n" (splitlines cuts at those too).
_LINES = [
    "```", "````", "```python", "``` a`b", "~~~", "~~~~ txt", "> ```", ">> ~~~", "  ```",
    "    ```", "\t```", "\u00a0```", "`` not", "x ```", "```` ```", "~~~ ~~~", "```   ",
    "# Title", "## Sub *x*", "### `code` [link](#a)", "   # indented", "    # four", "#",
    "####### seven", "#word", "# closing ##", "#\tTab", "## fn a(&self) -> &T", "# Title",
    "<table>", "<TABLE class='x'>", "  <table>", "<tr><td>a</td></tr>", "</table>",
    "</TABLE>  ", "<table><tr><td>one</td></tr></table>", "<tablex>", "a </table>",
    "", "", "", " ", "\t", "\u00a0", "\u3000", "text", "more text * _x_", "- item",
    "| a | b |", "> quote", "a\rb", "c\r\nd", "e\x0cf", "g\u2028h", "i\x85j", "k\x1cl",
]


def _random_markdown(rng: random.Random) -> str:
    lines = [rng.choice(_LINES) for _ in range(rng.randint(0, 60))]
    text = "\n".join(lines)
    return text + rng.choice(["", "\n", "\n\n", "\r\n"])


def test_blocks_read_every_page_as_the_line_by_line_reading_did() -> None:
    rng = random.Random(2026)
    pages = [PAGE, FENCE, TABLE, "", "\n", "# only", "```\nnever closed\n# not a heading"]
    pages += [_random_markdown(rng) for _ in range(3000)]
    for markdown in pages:
        assert list(blocks(markdown)) == _reference_blocks(markdown), markdown
        sections = [(s.path, s.anchor, s.heading, s.blocks) for s in _sections(markdown)]
        assert sections == _reference_sections(markdown), markdown
