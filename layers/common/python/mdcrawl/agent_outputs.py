"""The outputs for agents and context windows, written beside docs.md by finalize:

- ``llms-full.txt``: every page's full markdown in reading order, each under its title
  with its source URL (the llms.txt convention's name for the whole text; links stay
  absolute, so the file stands alone wherever it is copied);
- ``chunks.jsonl``: the search chunks (``mdcrawl.chunks``), one JSON object a line;
- with ``max_tokens``: ``docs-001.md``… each within that many estimated tokens, and
  ``docs-parts.md``, their index (``mdcrawl.parts``).

Written through the same opener as the other outputs (files locally, S3 on AWS). Pure
apart from the opener.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, BinaryIO

from .assemble import OutputOpener, PageMap
from .chunks import chunk_lines, chunk_page
from .llms import site_name
from .models import Job, PageRecord, PageStatus
from .order import reading_order
from .parts import PARTS_INDEX, PartPage, framed, parts_index, split_parts
from .rewrite import headings

LLMS_FULL = "llms-full.txt"
CHUNKS = "chunks.jsonl"
# (url, title, page markdown) -> the page's chunks.jsonl lines; locally a cache of the
# lines the pool workers made (adapters/local/chunks.py), so no page is chunked twice.
ChunkLines = Callable[[str, str, str], bytes]


def write_agent_outputs(
    job: Job,
    records: Sequence[PageRecord],
    read_markdown: Callable[[str], str],
    open_output: OutputOpener,
    max_tokens: int | None = None,
    page_chunks: ChunkLines | None = None,
    page_map: PageMap | None = None,
) -> tuple[str, ...]:
    """Write the files above; returns their names. ``page_map``: where each page's part
    of llms-full.txt and chunks.jsonl is made (``assemble.PageMap``; default: here)."""
    writer = AgentOutputs(job, records, page_chunks)
    pieces = _Pieces(writer, read_markdown)
    with writer.streams(open_output):
        for piece in (page_map or _serial)(pieces, len(writer.ordered)):
            writer.take(piece)
    return writer.finish(read_markdown, open_output, max_tokens)


class AgentOutputs:
    """llms-full.txt and chunks.jsonl page by page: ``piece`` makes a page's part (pure:
    it may run in another process, beside the page's rendering, ``assemble.Companion``),
    ``take`` writes it, in reading order, while ``streams`` holds the files open."""

    def __init__(
        self,
        job: Job,
        records: Sequence[PageRecord],
        page_chunks: ChunkLines | None = None,
        ordered: list[PageRecord] | None = None,
    ) -> None:
        """``ordered``: ``records`` in reading order, when the caller has them so."""
        self.job = job
        ordered = reading_order(records, job.url) if ordered is None else ordered
        self.ordered = [r for r in ordered if r.status is PageStatus.OK]
        self.name = site_name(self.ordered, job.url)
        self._chunks = page_chunks or chunked
        self._full: BinaryIO | None = None
        self._lines: BinaryIO | None = None

    def piece(self, record: PageRecord, stored_markdown: str) -> tuple[bytes, bytes]:
        """The page's llms-full.txt part and chunks.jsonl lines, encoded."""
        markdown = page_markdown(record, stored_markdown)
        title = record.title or record.url
        text = framed(markdown, record.url).encode("utf-8")
        return text, self._chunks(record.url, title, markdown)

    @contextmanager
    def streams(self, open_output: OutputOpener) -> Iterator[None]:
        with open_output(LLMS_FULL) as full, open_output(CHUNKS) as lines:
            # not a "Source:" line: that marks where each page starts (mdcrawl pull reads it)
            header = f"# {self.name}\n\n> {len(self.ordered)} pages crawled from {self.job.url}\n\n"
            full.write(header.encode())
            self._full, self._lines = full, lines
            try:
                yield
            finally:
                self._full = self._lines = None

    def take(self, piece: tuple[bytes, bytes]) -> None:
        assert self._full is not None and self._lines is not None, "take outside streams()"
        self._full.write(piece[0])
        self._lines.write(piece[1])

    def finish(
        self, read_markdown: Callable[[str], str], open_output: OutputOpener, max_tokens: int | None
    ) -> tuple[str, ...]:
        """With ``max_tokens``, the parts (a pass of their own); the names written."""
        written = [LLMS_FULL, CHUNKS]
        if max_tokens:
            parts = split_parts(list(_pages(self.ordered, read_markdown)), max_tokens, self.name)
            for part in parts:
                _write(open_output, part.name, part.text)
            _write(open_output, PARTS_INDEX, parts_index(parts, self.name, max_tokens))
            written += [*(p.name for p in parts), PARTS_INDEX]
        return tuple(written)


class _Pieces:
    """The i-th page's ``AgentOutputs.piece``, its markdown read here."""

    def __init__(self, writer: AgentOutputs, read_markdown: Callable[[str], str]) -> None:
        self._writer, self._read = writer, read_markdown

    def __call__(self, index: int) -> tuple[bytes, bytes]:
        record = self._writer.ordered[index]
        return self._writer.piece(record, self._read(record.markdown_key or ""))


def _serial(pieces: Callable[[int], Any], count: int) -> Iterator[Any]:
    return map(pieces, range(count))


def agent_output_names(max_tokens: int | None) -> dict[str, str]:
    """Result kinds (``result_keys``) of these outputs → their names."""
    names = {"llms_full": LLMS_FULL, "chunks": CHUNKS}
    return {**names, "parts": PARTS_INDEX} if max_tokens else names


def chunked(url: str, title: str, markdown: str) -> bytes:
    """The page's chunks.jsonl lines, made now."""
    return chunk_lines(chunk_page(markdown, url, title))


def page_markdown(record: PageRecord, markdown: str) -> str:
    """The page's markdown starting with its own h1 (the title is added if it has none),
    as llms-full.txt holds it: title line, blank line, body, one final newline."""
    markdown = markdown.strip("\r\n")
    first = headings(markdown.split("\n", 1)[0])
    if not (first and first[0][0] == 1):
        markdown = f"# {record.title or record.url}\n\n{markdown}"
    title, _, body = markdown.partition("\n")
    body = body.strip("\n")
    return f"{title}\n\n{body}\n" if body else f"{title}\n"


def _pages(
    ordered: Sequence[PageRecord], read_markdown: Callable[[str], str]
) -> Iterator[PartPage]:
    for record in ordered:
        markdown = page_markdown(record, read_markdown(record.markdown_key or ""))
        yield PartPage(record.url, record.title or record.url, markdown)


def _write(open_output: OutputOpener, name: str, text: str) -> None:
    with open_output(name) as stream:
        stream.write(text.encode("utf-8"))
