"""The assembled outputs of a job: docs.md, pages/NNNN-slug.md, llms.txt, manifest.jsonl.

Everything is written through ``open_output`` (files locally, S3 multipart on AWS),
page by page: the combined document is never held in memory. That costs two reads
of each page's markdown: a first pass collects the headings (for the table of
contents and the anchors every link needs), the second writes (and hands each page,
as read, to a ``Companion``: finalize's llms-full.txt and chunks.jsonl).

Anchors: docs.md relies on the GitHub-style heading ids that GitHub, GitLab, VS Code,
markdown-it-anchor, Obsidian and most other viewers generate themselves (github-slugger
rules, repeats suffixed -1, -2 across the whole document). No ``<a id>`` tags: some
renderers strip raw HTML and every LLM reading the file would see them as noise.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO, NamedTuple, Protocol
from urllib.parse import unquote

from .llms import llms_txt, site_name
from .models import Job, PageRecord
from .order import reading_order, relative_segments, strip_html_suffix
from .quality import SAMPLE_PAGES, RepeatedLines, line_hashes, page_warnings, summarize
from .rewrite import (
    LinkMemo,
    Slugger,
    fragment_of,
    github_slug,
    headings,
    link_text,
    plain_text,
    rewrite_links_twice,
    url_key,
)
from .titles import Retitle, apply_retitle, site_retitles
from .tokens import CHARS_PER_TOKEN, estimate_tokens

OutputOpener = Callable[[str], AbstractContextManager[BinaryIO]]
# ``page_map(render, count)``: ``render(i)`` for i in range(count), answers in that order.
# The default is the builtin ``map``; the local runtime spreads the pages over forked
# processes (``adapters/local/parallel.py``). ``render`` is pure apart from reading the
# stores, so where it runs changes no byte.
PageMap = Callable[[Callable[[int], Any], int], Iterator[Any]]


class Companion(Protocol):
    """Other per-page outputs made in the same pass as the pages' rendering, from the
    same read of each page (``agent_outputs.AgentOutputs``): ``piece`` beside the page's
    rendering (pure: maybe in a forked process), ``take`` its answer here, in reading
    order."""

    def piece(self, record: PageRecord, stored_markdown: str) -> Any: ...

    def take(self, piece: Any) -> None: ...

DOCS = "docs.md"
LLMS = "llms.txt"
MANIFEST = "manifest.jsonl"
PAGES_DIR = "pages/"
CONTENTS = "Contents"
TOC_DEPTH = 3  # docs.md heading levels listed in the contents: page titles and their h2s


@dataclass(frozen=True)
class AssembledResult:
    names: tuple[str, ...]  # every output written, by the name given to open_output
    pages: int  # ok pages in the document
    words: int  # their words, as the converter counted them
    tokens: int  # estimated (tokens.py) from the characters of docs.md
    truncated: bool  # copied from the job
    warnings: dict[str, int] = field(default_factory=dict)  # kind -> pages with it
    pages_with_warnings: int = 0
    manifest_order: tuple[str, ...] = ()  # url_hash of each manifest line, in order


class _Heading(NamedTuple):  # a tuple: made for every heading of the site, serially
    level: int  # in docs.md, after re-levelling
    text: str
    anchor: str  # its id in docs.md
    local: str = ""  # its id in the page's own file


@dataclass(frozen=True)
class _Planned:
    page: PageRecord
    file: str  # "pages/0001-intro.md"
    headings: tuple[_Heading, ...]  # the first is the page's own title
    fragments: dict[str, tuple[str, str]]  # fragment -> (docs.md anchor, anchor in its file)
    unresolved: list[int] = field(default_factory=lambda: [0])  # links from it to no anchor
    tokens: int = 0  # the page's markdown, estimated (mdcrawl.tokens), for the manifest

    @property
    def anchor(self) -> str:
        return self.headings[0].anchor


def write_outputs(
    job: Job,
    pages: Sequence[PageRecord],
    read_markdown: Callable[[str], str],
    open_output: OutputOpener,
    read_anchors: Callable[[str], dict[str, Any]] | None = None,
    page_map: PageMap | None = None,
    companion: Companion | None = None,
    page_files: OutputOpener | None = None,
    ordered: list[PageRecord] | None = None,
) -> AssembledResult:
    """Write every output of ``job`` and say what was written. ``read_anchors(key)``
    gives a page's ``{element id: (heading text, occurrence)}`` (anchors.py) by its
    markdown key; ``page_map`` renders the pages (``PageMap``; default: one by one);
    ``companion`` gets each page's record and stored markdown as they are rendered;
    ``page_files``: an opener of the pages' own files that works in any process the
    page map renders in (files on a disk): each page's file is then written where the
    page is rendered instead of being carried back here (default: ``open_output``,
    here). Either way its name is in the result's ``names``. ``ordered``: ``pages`` in
    reading order (``order.reading_order``), when the caller has them so already."""
    ordered = reading_order(pages, job.url) if ordered is None else ordered
    name = site_name(ordered, job.url)
    stored_pages = ordered  # as recorded, before any retitling: what a companion reads
    pages, ordered, fixes = _retitled(pages, ordered, read_markdown)
    retitled = _retitled_reader(read_markdown, fixes)
    repeated, page_map = RepeatedLines(), page_map or _serial
    plan = _plan(ordered, job.url, name, retitled, repeated, page_map)
    linker = _Linker(plan, pages, read_anchors)
    renderer = _Renderer(plan, read_markdown, fixes, linker, repeated, page_files)
    if companion is not None:
        renderer.companion = companion, stored_pages
    chars, report = _write_docs_and_pages(job, name, renderer, open_output, page_map)
    _write_text(open_output, LLMS, llms_txt(name, job.url, ordered, _summary(ordered, job.url)))
    listed = _write_manifest(open_output, pages, plan, report)
    warnings = list(report.values())
    return AssembledResult(
        names=(*(p.file for p in plan), DOCS, LLMS, MANIFEST),
        pages=len(plan),
        words=sum(p.page.words for p in plan),
        tokens=-(-chars // CHARS_PER_TOKEN),
        truncated=job.truncated,
        warnings=summarize(warnings),
        pages_with_warnings=sum(1 for found in warnings if found),
        manifest_order=tuple(page.url_hash for page in listed),
    )


def _retitled(
    pages: Sequence[PageRecord], ordered: list[PageRecord], read: Callable[[str], str]
) -> tuple[Sequence[PageRecord], list[PageRecord], dict[str, Retitle]]:
    """Pages whose title many pages share get their own (titles.py): the records, and
    the fix of each one's markdown by its key (``_retitled_markdown``)."""
    fixes = site_retitles(ordered, read)
    if not fixes:
        return pages, ordered, {}
    renamed = {h: replace(p, title=fixes[h].title) for p in ordered if (h := p.url_hash) in fixes}
    by_key: dict[str, Retitle] = {
        p.markdown_key or "": fixes[p.url_hash] for p in ordered if p.url_hash in fixes
    }
    return (
        [renamed.get(p.url_hash, p) for p in pages],
        [renamed.get(p.url_hash, p) for p in ordered],
        by_key,
    )


def _retitled_markdown(markdown: str, key: str, fixes: dict[str, Retitle]) -> str:
    """A page's stored markdown as every step after retitling reads it."""
    fix = fixes.get(key)
    return apply_retitle(markdown, fix) if fix else markdown


def _retitled_reader(read: Callable[[str], str], fixes: dict[str, Retitle]) -> Callable[[str], str]:
    if not fixes:
        return read
    return lambda key: _retitled_markdown(read(key), key, fixes)


# --- first pass: files, headings, anchors -------------------------------------------------


@dataclass(frozen=True)
class _Read:
    """The first pass's reading of one page, which needs no other page (``PageMap``)."""

    file: str  # "pages/0001-intro.md"
    # level, text, its GitHub slug, its anchor in the page's file and that anchor loosened
    headings: tuple[tuple[int, str, str, str, str], ...]
    tokens: int  # the page's markdown, estimated
    lines: frozenset[int] | None  # its line hashes, for the first pages (quality.py)


class _PageReader:
    """``_Read`` of the i-th page in reading order."""

    def __init__(
        self, ordered: Sequence[PageRecord], start_url: str, read: Callable[[str], str]
    ) -> None:
        self._ordered, self._start, self._read = ordered, start_url, read
        self._width = max(4, len(str(len(ordered))))

    def __call__(self, index: int) -> _Read:
        page = self._ordered[index]
        markdown = _with_title(self._read(page.markdown_key or ""), page)
        file = f"{PAGES_DIR}{index + 1:0{self._width}d}-{page_slug(page.url, self._start)}.md"
        page_slugs = Slugger()
        found = tuple(
            (level, text, base, local, _loose(local))
            for level, text in headings(markdown)
            for base in (github_slug(plain_text(text)),)
            for local in (page_slugs.unique(base),)
        )
        lines = line_hashes(markdown) if index < SAMPLE_PAGES else None
        return _Read(file, found, estimate_tokens(markdown), lines)


def _plan(
    ordered: Sequence[PageRecord],
    start_url: str,
    name: str,
    read_markdown: Callable[[str], str],
    repeated: RepeatedLines,
    page_map: PageMap,
) -> list[_Planned]:
    doc_slugs = Slugger()
    doc_slugs.slug(name)  # the document's title and contents heading take their ids first
    doc_slugs.slug(CONTENTS)
    plan = []
    reads = page_map(_PageReader(ordered, start_url, read_markdown), len(ordered))
    for page, read in zip(ordered, reads, strict=True):
        if read.lines is not None:
            repeated.add_sample(read.lines)
        plan.append(_plan_page(page, read, doc_slugs))
    return plan


def _plan_page(page: PageRecord, read: _Read, doc_slugs: Slugger) -> _Planned:
    planned, fragments = [], {}
    for level, text, base, local, loose in read.headings:
        heading = _Heading(min(6, level + 1), text, doc_slugs.unique(base), local)
        fragments.setdefault(local, (heading.anchor, local))
        fragments.setdefault(loose, (heading.anchor, local))
        planned.append(heading)
    return _Planned(page, read.file, tuple(planned), fragments, tokens=read.tokens)


def _with_title(markdown: str, page: PageRecord) -> str:
    """The page's markdown, starting with its heading (one is added if it has none)."""
    markdown = markdown.lstrip("\r\n")
    found = headings(markdown.split("\n", 1)[0])
    if found and found[0][0] == 1:
        return markdown
    return f"# {page.title or page.url}\n\n{markdown}"


def _loose(fragment: str) -> str:
    """Sites and GitHub slug punctuation differently ("what-s-new" vs "whats-new")."""
    if fragment.isascii():  # every heading of most sites: a table, not a pattern
        return "~" + fragment.lower().translate(_ASCII_NOT_ALNUM)
    return "~" + _NOT_ALNUM.sub("", fragment.lower())


_NOT_ALNUM = re.compile(r"[\W_]+")
_ASCII_NOT_ALNUM = dict.fromkeys(c for c in range(128) if not chr(c).isalnum())


def page_slug(url: str, start_url: str) -> str:
    """A file-name slug from the URL path under the crawl's directory."""
    segments = [strip_html_suffix(s) for s in relative_segments(url, start_url) if s]
    if segments and segments[-1].lower() == "index":
        segments.pop()
    slug = re.sub(r"[^a-z0-9]+", "-", "-".join(segments).lower()).strip("-")
    return slug[:60].rstrip("-") or "index"


# --- links --------------------------------------------------------------------------------


class _Linker:
    """Where a link to an included page points in docs.md, and in another page's file.

    A fragment resolves to the heading it names (by the page's slug, GitHub's, or a
    looser match), else to the heading that holds the element with that id (the page's
    anchors, read only when such a link is met), else to the page's top: a link into
    the bundle always lands somewhere, and the miss is counted for the quality report.
    """

    def __init__(
        self,
        plan: Sequence[_Planned],
        records: Sequence[PageRecord],
        read_anchors: Callable[[str], dict[str, Any]] | None = None,
    ) -> None:
        self._by_key: dict[str, _Planned] = {}
        by_content: dict[str, _Planned] = {}
        for planned in plan:
            self._by_key.setdefault(url_key(planned.page.url), planned)
            if planned.page.content_hash:
                by_content.setdefault(planned.page.content_hash, planned)
        # A URL left out as a duplicate (same bytes as an included page: an alias, a
        # redirect) still points at the page it duplicates.
        for record in records:
            alias = by_content.get(record.content_hash or "")
            if alias is not None:
                self._by_key.setdefault(url_key(record.url), alias)
        self._read_anchors = read_anchors
        self._anchors: dict[str, dict[str, tuple[str, str]]] = {}  # key -> {id: anchors}

        # url -> (target, fragment, _fragment(target, fragment)): the same nav and
        # cross-reference links recur on every page, and each is rewritten twice.
        self._found: dict[str, tuple[_Planned | None, str, tuple[str, str] | None]] = {}
        # and the rewritten links themselves, by URL (``in_document``, ``in_file``)
        self._in_document: dict[str, str | None] = {}
        self._in_file: dict[str, tuple[_Planned | None, str | None, bool]] = {}

    def in_document(self, url: str) -> str | None:
        known = self._in_document.get(url, _UNKNOWN)
        if known is _UNKNOWN:
            target, _, found = self._lookup(url)
            known = None if target is None else f"#{found[0] if found else target.anchor}"
            self._in_document[url] = known
        return known

    def in_file(self, url: str, source: _Planned) -> str | None:
        known = self._in_file.get(url)
        if known is None:
            known = self._in_file[url] = self._file_link(url)
        target, elsewhere, missed = known
        if missed:
            source.unresolved[0] += 1
        if target is source:
            return self._self_link(url)
        return elsewhere

    def _file_link(self, url: str) -> tuple[_Planned | None, str | None, bool]:
        """What a link to ``url`` becomes in any other page's file than its target's:
        (its target, the new link, whether its fragment named no anchor)."""
        target, fragment, found = self._lookup(url)
        if target is None:
            return None, None, False
        anchor = f"#{found[1]}" if found else ""
        return target, target.file.removeprefix(PAGES_DIR) + anchor, bool(fragment) and not found

    def _self_link(self, url: str) -> str:
        target, _, found = self._lookup(url)
        assert target is not None
        return f"#{found[1]}" if found else "#" + _file_anchor(target)

    def _lookup(self, url: str) -> tuple[_Planned | None, str, tuple[str, str] | None]:
        known = self._found.get(url)
        if known is None:
            target, fragment = self._find(url)
            found = self._fragment(target, fragment) if target is not None else None
            known = self._found[url] = (target, fragment, found)
        return known

    def _find(self, url: str) -> tuple[_Planned | None, str]:
        if not url.lower().startswith(("http://", "https://")):
            return None, ""
        target = self._by_key.get(url_key(url))
        return (None, "") if target is None else (target, fragment_of(url))

    def _fragment(self, target: _Planned, fragment: str) -> tuple[str, str] | None:
        if not fragment:
            return None
        fragments = target.fragments
        found = (
            fragments.get(fragment)
            or fragments.get(github_slug(fragment))
            or fragments.get(_loose(fragment))
        )
        if found is None:
            ids = self._ids(target)
            found = ids.get(fragment) or ids.get(unquote(fragment))
        return found

    def _ids(self, target: _Planned) -> dict[str, tuple[str, str]]:
        key = target.page.markdown_key or ""
        if key not in self._anchors:
            read = self._read_anchors
            refs = read(key) if read is not None and key else {}
            self._anchors[key] = _id_anchors(target, refs) if refs else {}
        return self._anchors[key]


_UNKNOWN = object()  # not looked up yet (a lookup's answer may be None)


def _id_anchors(
    target: _Planned, refs: dict[str, Sequence[object]]
) -> dict[str, tuple[str, str]]:
    """``{element id: (docs.md anchor, anchor in its file)}`` from the converter's
    ``{id: (heading text, occurrence)}``; the page's top for ids above its headings."""
    seen = Counter[str]()
    by_heading = {}
    for heading in target.headings:  # their anchors in the page's file, as _PageReader made
        by_heading[(heading.text, seen[heading.text])] = (heading.anchor, heading.local)
        seen[heading.text] += 1
    top = (target.anchor, _file_anchor(target))
    return {
        element_id: by_heading.get((str(ref[0]), int(str(ref[1]))), top)
        for element_id, ref in refs.items()
    }


def _file_anchor(target: _Planned) -> str:
    return github_slug(plain_text(target.headings[0].text))


# --- second pass: writing -----------------------------------------------------------------


class _Sink:
    """Text onto a binary stream, counting the characters written."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.chars = 0

    def write(self, text: str) -> None:
        self.write_encoded(text.encode("utf-8"), len(text))

    def write_encoded(self, data: bytes, chars: int) -> None:
        self._stream.write(data)
        self.chars += chars


def _page_file(planned: _Planned, body: str) -> str:
    """pages/NNNN-slug.md: a front block, then the page (its links rewritten to point at
    other files)."""
    # the title as read, not as written: a heading's links and code marks stay in the body
    title, source = _yaml(plain_text(planned.headings[0].text)), _yaml(planned.page.url)
    return f"---\ntitle: {title}\nsource: {source}\n---\n\n{body.rstrip(chr(10))}\n"


def _yaml(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML scalar


_Report = dict[int, dict[str, int]]  # id(page) -> its warnings (quality.py)


@dataclass(frozen=True)
class _Rendered:
    """One page's part of the outputs, encoded: its own file and its docs.md section."""

    file: bytes | None  # pages/NNNN-slug.md (None: written where it was rendered)
    section: bytes  # its section of docs.md
    section_chars: int
    warnings: dict[str, int]
    companion_piece: Any = None  # the companion's answer for the page (``Companion``)


class _Renderer:
    """Everything a page's rendering needs once the plan is made: the per-page half of
    the second pass, so that it can run anywhere (``PageMap``)."""

    def __init__(
        self,
        plan: Sequence[_Planned],
        read_markdown: Callable[[str], str],
        fixes: dict[str, Retitle],
        linker: _Linker,
        repeated: RepeatedLines,
        page_files: OutputOpener | None = None,
    ) -> None:
        self.plan, self._read, self._fixes, self._linker = plan, read_markdown, fixes, linker
        self._repeated, self._page_files = repeated, page_files
        self._links: LinkMemo = {}  # the links read so far (rewrite.rewrite_links_twice)
        repeated.repeated()  # settled here, before any page is rendered (maybe elsewhere)
        # with the pages as stored, in plan order (a record's title may have been fixed)
        self.companion: tuple[Companion, Sequence[PageRecord]] | None = None

    def __call__(self, index: int) -> _Rendered:
        planned, linker = self.plan[index], self._linker
        key = planned.page.markdown_key or ""
        stored_markdown = self._read(key)
        piece = None
        if self.companion is not None:
            companion, stored_pages = self.companion
            piece = companion.piece(stored_pages[index], stored_markdown)
        markdown = _with_title(_retitled_markdown(stored_markdown, key, self._fixes), planned.page)
        in_file, in_document = rewrite_links_twice(
            markdown,
            functools.partial(linker.in_file, source=planned),
            linker.in_document,
            1,
            self._links,
        )
        section = _section(planned, in_document)
        lines = self._repeated.count(markdown)
        warnings = page_warnings(in_file, planned.page.words, lines, planned.unresolved[0])
        file = _page_file(planned, in_file).encode("utf-8")
        if self._page_files is None:
            return _Rendered(file, section.encode("utf-8"), len(section), warnings, piece)
        # written here: a forked renderer's file creation (most of a small page's cost to
        # the system) then runs beside the others', and the file's bytes never come back
        with self._page_files(planned.file) as stream:
            stream.write(file)
        return _Rendered(None, section.encode("utf-8"), len(section), warnings, piece)


def _serial(render: Callable[[int], Any], count: int) -> Iterator[Any]:
    return map(render, range(count))


def _write_docs_and_pages(
    job: Job,
    name: str,
    renderer: _Renderer,
    open_output: OutputOpener,
    page_map: PageMap,
) -> tuple[int, _Report]:
    """docs.md piece by piece, and each page's own file from the same read of it;
    returns the characters written to docs.md and each page's quality report."""
    report: _Report = {}
    plan = renderer.plan
    with open_output(DOCS) as stream:
        sink = _Sink(stream)
        sink.write(_docs_header(job, name, plan))
        for planned in plan:
            sink.write("".join(_toc_lines(planned)))
        for planned, rendered in zip(plan, page_map(renderer, len(plan)), strict=True):
            if rendered.file is not None:
                with open_output(planned.file) as page_file:
                    page_file.write(rendered.file)
            sink.write_encoded(rendered.section, rendered.section_chars)
            report[id(planned.page)] = rendered.warnings
            if renderer.companion is not None:
                renderer.companion[0].take(rendered.companion_piece)
        return sink.chars, report


def crawl_date(job: Job) -> str:
    """The day docs.md says the crawl happened (part of its bytes)."""
    when = job.finished_at or job.started_at or job.created_at
    return time.strftime(" on %Y-%m-%d", time.gmtime(when)) if when else ""


def _docs_header(job: Job, name: str, plan: Sequence[_Planned]) -> str:
    words = sum(p.page.words for p in plan)
    note = f"Crawled by mdcrawl{crawl_date(job)}"
    note += f": {len(plan)} pages, {words:,} words"
    if job.truncated:
        note += f"; truncated by the budget or page cap, {job.left} URLs left"
    return f"# {name}\n\nSource: {job.url}\n{note}.\n\n## {CONTENTS}\n\n"


def _toc_lines(planned: _Planned) -> Iterator[str]:
    for heading in planned.headings:
        if heading.level <= TOC_DEPTH:
            indent = "  " * (heading.level - 2)
            text = re.sub(r"([\[\]])", r"\\\1", link_text(heading.text).strip()) or heading.anchor
            yield f"{indent}- [{text}](#{heading.anchor})\n"


def _section(planned: _Planned, relinked: str) -> str:
    """A page's section of docs.md: its heading, its source, its body one level down
    (``relinked``: links rewritten to point into docs.md, headings one level down)."""
    body = relinked.strip("\n")
    title, _, rest = body.partition("\n")
    return f"\n{title}\n\nSource: {planned.page.url}\n\n{rest.strip(chr(10))}\n"


def _summary(ordered: Sequence[PageRecord], start_url: str) -> str:
    """The start page's description (else the first page's) for the llms.txt summary."""
    start_key = url_key(start_url)
    start = next((p for p in ordered if url_key(p.url) == start_key), None)
    start = start or (ordered[0] if ordered else None)
    return start.description if start else ""


def _write_manifest(
    open_output: OutputOpener,
    pages: Sequence[PageRecord],
    plan: Sequence[_Planned],
    report: _Report,
) -> list[PageRecord]:
    """Write manifest.jsonl; returns its records in the order of its lines."""
    # 1-based, like the file numbers: order 3 is pages/0003-….md
    position = {id(p.page): (i, p.file) for i, p in enumerate(plan, start=1)}
    tokens = {id(p.page): p.tokens for p in plan}
    placed = [p.page for p in plan]
    others = sorted((p for p in pages if id(p) not in position), key=lambda p: (p.order, p.url))
    with open_output(MANIFEST) as stream:
        for page in (*placed, *others):
            index, file = position.get(id(page), (None, None))
            entry = {
                **_manifest_line(page, file, index),
                "tokens": tokens.get(id(page), 0),
                "native": page.native,
                "warnings": report.get(id(page), {}),
            }
            line = json.dumps(entry, ensure_ascii=False)
            stream.write(f"{line}\n".encode())
    return [*placed, *others]


def _manifest_line(page: PageRecord, file: str | None, index: int | None) -> dict[str, object]:
    return {
        "url": page.url,
        "title": page.title,
        "file": file,
        "words": page.words,
        "from_cache": page.from_cache,
        "status": str(page.status),
        "reason": page.reason,
        "order": index,
    }


def _write_text(open_output: OutputOpener, name: str, text: str) -> None:
    with open_output(name) as stream:
        stream.write(text.encode("utf-8"))
