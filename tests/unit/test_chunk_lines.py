"""A page's chunks.jsonl lines written in one pass (``page_chunk_lines``, what the pool
workers keep) are the very bytes of the chunks made and encoded one at a time
(``chunk_lines(chunk_page(...))``, what finalize and AWS write), and read back the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from mdcrawl.adapters.local import FileBlobStore
from mdcrawl.adapters.local.chunks import ChunkCache
from mdcrawl.chunks import chunk_lines, chunk_page, chunks_from_lines, page_chunk_lines
from mdcrawl.convert import convert_html

PAGES = Path(__file__).parents[1] / "fixtures/pages"
URL = "https://docs.example.com/guide/page.html"

# Everything a JSON string escapes or keeps: quotes, backslashes, control characters,
# U+2028/U+2029 and U+0085 (kept as they are), non-ASCII letters, emoji, a tab.
ODD = 'q"uote \\ back\x01\x1f ctl\u2028ls\u2029ps\u0085nel é 中文 😀 tab\there'
MARKDOWN = (
    "Before any heading.\n\n"
    f"# Title {ODD}\n\nIntro {ODD}.\n\n"
    "## `code` [link](x.html) *em*\n\n"
    + "\n\n".join(f"Paragraph {i} " + "word " * 50 for i in range(8))
    + "\n\n```\nfenced\n\n# not a heading\n```\n\n"
    "<table>\n<tr><td>a</td></tr>\n\n<tr><td>b</td></tr>\n</table>\n\n"
    "### Same\n\nx\n\n### Same\n\ny\n\n###### Deep\n\n# Again\n"
)


def _old_way(markdown: str, url: str, title: str, max_tokens: int = 800) -> bytes:
    return chunk_lines(chunk_page(markdown, url, title, max_tokens))


@pytest.mark.parametrize("max_tokens", [800, 40, 1])
@pytest.mark.parametrize(
    ("markdown", "url", "title"),
    [
        (MARKDOWN, URL, f"The page {ODD}"),
        (MARKDOWN, f"{URL}?q=\"x\"", ""),
        ("", URL, "Empty"),
        ("# Only a heading\n", URL, "T"),
        ("No heading at all.\n\nTwo blocks.\n", URL, "T"),
    ],
)
def test_lines_written_in_one_pass_are_the_bytes_of_the_chunks_encoded_one_by_one(
    markdown: str, url: str, title: str, max_tokens: int
) -> None:
    assert page_chunk_lines(markdown, url, title, max_tokens) == _old_way(
        markdown, url, title, max_tokens
    )


@pytest.mark.parametrize("page", sorted(PAGES.glob("*/*.html")), ids=lambda p: p.stem)
def test_converted_fixture_pages_chunk_to_the_same_bytes_either_way(page: Path) -> None:
    markdown = convert_html(page.read_bytes(), URL).markdown
    assert markdown.strip()
    lines = page_chunk_lines(markdown, URL, page.stem)
    assert lines == _old_way(markdown, URL, page.stem)
    assert chunks_from_lines(lines) == chunk_page(markdown, URL, page.stem)


def test_a_lone_surrogate_fails_both_ways_alike() -> None:
    # What the encoder gave, utf-8 cannot hold: neither way writes a line with it.
    with pytest.raises(UnicodeEncodeError):
        _old_way("# \ud800\n", URL, "T")
    with pytest.raises(UnicodeEncodeError):
        page_chunk_lines("# \ud800\n", URL, "T")


def test_the_chunk_cache_keeps_the_one_pass_lines(tmp_path: Path) -> None:
    cache = ChunkCache(FileBlobStore(tmp_path))
    cache.prepare(URL, "T", MARKDOWN)
    assert cache.lines(URL, "T", MARKDOWN) == _old_way(MARKDOWN, URL, "T")
    assert cache.chunks(URL, "T", MARKDOWN) == chunk_page(MARKDOWN, URL, "T")
