"""HTML -> markdown: a markdownify subclass tuned for documentation.

Two passes. ``annotate`` (``annotate.py``) works on the lxml region (fast XPath): it
names each code block's language and turns admonitions into labelled blockquotes.
``mdwriter.py`` then writes the markdown straight from the lxml tree: the same string
as the soup path kept here for what it does not reproduce (the region as a
BeautifulSoup tree, ``soupbuild.py``, rendered by ``DocsConverter``). Either way:
ATX headings, fenced verbatim code, GFM tables (HTML when GFM cannot hold the table),
readable API signatures. Code blocks and HTML tables leave the converter
as placeholders so that whitespace clean-up never touches them; ``render_markdown``
puts them back with the blockquote or list prefix of the line they sit on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from bs4 import Comment, Doctype, NavigableString, Tag
from lxml.html import HtmlElement
from markdownify import (
    ATX,
    BACKSLASH,
    MarkdownConverter,
    chomp,
    re_all_whitespace,
    re_html_heading,
    re_newline_whitespace,
    re_whitespace,
    should_remove_whitespace_inside,
    should_remove_whitespace_outside,
)

from .anchors import HeadingRef, mark_ids, take_anchors
from .annotate import LABEL_ATTR, LANG_ATTR, SIGNATURE_ATTR, annotate
from .soupbuild import soup_from_lxml

_PLACEHOLDER = re.compile(r"^(.*?)\x02(\d+)\x03[ \t]*$", re.MULTILINE)
_EDGE_BLANK_LINES = re.compile(r"^(?:[ \t]*\n)+")
_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING_WS = re.compile(r"[ \t]+$", re.MULTILINE)
_LINK_TARGET = re.compile(r"\]\([^)]*\)|<https?://[^>]*>")
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")
_STARTS_BLOCK = re.compile(r"^(?:#{1,6} |[-*+] |\d+[.)] |\x02|\||>|`{3})")
_BLOCK_TAGS = {"ul", "ol", "pre", "table", "dl", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6"}
_CONVERTER_ATTRS = {
    "href",
    "src",
    "alt",
    "title",
    "rowspan",
    "colspan",
    "start",
    LANG_ATTR,
    LABEL_ATTR,
    SIGNATURE_ATTR,
}
_HTML_KEEP_ATTRS = {"href", "src", "alt", "title", "rowspan", "colspan"}


@dataclass(frozen=True)
class Markdown:
    text: str
    prose_words: int  # words outside code blocks and link targets
    anchors: dict[str, HeadingRef] = field(default_factory=dict)  # element id -> heading



class DocsConverter(MarkdownConverter):
    """markdownify, with fenced verbatim code, safe tables and doc-friendly blocks."""

    class Options(MarkdownConverter.DefaultOptions):
        heading_style = ATX
        bullets = "-"
        newline_style = BACKSLASH
        escape_underscores = False  # snake_case identifiers read better unescaped
        keep_inline_images_in = ["td", "th"]

    def __init__(self, **options: object) -> None:
        super().__init__(**options)
        self.blocks: list[str] = []  # fenced code and HTML tables, by placeholder index
        self._numbered: dict[int, tuple[Tag, dict[int, int]]] = {}  # ordered lists

    def process_tag(self, node: Tag, parent_tags: set[str] | None = None) -> str:
        if node.name == "pre":
            return self._placeholder(fence(node.get_text(), node.get(LANG_ATTR) or ""))
        if node.name == "table":
            return self._table(node, parent_tags or set())
        return self._process_children(node, parent_tags or set())

    def _process_children(self, node: Tag, parent_tags: set[str]) -> str:
        """markdownify's process_tag, minus its per-tag ``find_parent("pre")`` walk (a
        third of the conversion time): a <pre> never reaches here, it is fenced whole."""
        remove_inside = _removes_inside(node)
        children = [el for el in node.children if not _ignorable(el, remove_inside)]
        tags = parent_tags | {node.name}
        if node.name in _INLINE_CONTEXT or re_html_heading.match(node.name):
            tags.add("_inline")
        if node.name in _NOFORMAT:
            tags.add("_noformat")
        strings = [s for s in (self.process_element(el, tags) for el in children) if s]
        text = _join_blocks(strings)
        convert = self.get_conv_fn_cached(node.name)
        return convert(node, text, parent_tags=parent_tags) if convert else text

    def process_text(self, el: NavigableString, parent_tags: set[str] | None = None) -> str:
        """markdownify's, with its regexes run only where they can change something and
        its whitespace questions asked once per tag name (one call per text node)."""
        parent_tags = set() if parent_tags is None else parent_tags
        text = str(el) or ""
        if "pre" not in parent_tags:
            if self.options["wrap"]:
                text = re_all_whitespace.sub(" ", text)
            else:
                if "\n" in text or "\r" in text:
                    text = re_newline_whitespace.sub("\n", text)
                if "\t" in text or "  " in text:
                    text = re_whitespace.sub(" ", text)
        if "_noformat" not in parent_tags:
            text = self.escape(text, parent_tags)
        previous, following = el.previous_sibling, el.next_sibling
        if _removes_outside(previous) or (not previous and _removes_inside(el.parent)):
            text = text.lstrip(" \t\r\n")
        if _removes_outside(following) or (not following and _removes_inside(el.parent)):
            text = text.rstrip()
        return text

    def _placeholder(self, block: str) -> str:
        self.blocks.append(block)
        return f"\n\n\x02{len(self.blocks) - 1}\x03\n\n"

    # Tables ---------------------------------------------------------------

    def _table(self, table: Tag, parent_tags: set[str]) -> str:
        rows = [tr for tr in table_rows(table) if not is_blank_row(tr)]
        if is_layout_table(table, rows):
            return self._flatten(table, rows, parent_tags)
        if not fits_gfm(table):
            return self._placeholder(html_table(table))
        cells = [self._row_cells(tr) for tr in rows]
        cells = [row for row in cells if row]
        if not cells:
            return ""
        caption = table.find("caption")
        title = f"{self._cell_text(caption)}\n\n" if caption else ""
        return "\n\n" + title + gfm_table(cells) + "\n\n"

    def _row_cells(self, tr: Tag) -> list[str]:
        return [self._cell_text(cell) for cell in tr.find_all(("td", "th"), recursive=False)]

    def _cell_text(self, cell: Tag) -> str:
        return self._inline(cell).replace("|", r"\|")

    def _inline(self, cell: Tag) -> str:
        return " ".join(super().process_tag(cell, parent_tags={"_inline"}).split())

    def _flatten(self, table: Tag, rows: list[Tag], parent_tags: set[str]) -> str:
        """A layout table as the blocks it lays out: a row of short cells (a navigation
        bar, a title line) becomes one line, a term beside a block becomes a definition,
        any other cell its own block."""
        if not rows:  # no rows of its own (cells straight in the table): every cell a block
            rows = [table]
        parts: list[str] = []
        for tr in rows:
            cells = [c for c in _own_cells(tr) if _has_content(c)]
            if cells and not any(_holds_blocks(c) for c in cells):
                parts.append(" ".join(p for p in map(self._inline, cells) if p))
            elif len(cells) == 2 and not _holds_blocks(cells[0]):
                term = self._inline(cells[0])
                parts += [_bold(term), self._cell_block(cells[1], parent_tags)]
            else:
                parts += [self._cell_block(cell, parent_tags) for cell in cells]
        return "\n\n" + "\n\n".join(p.strip("\n") for p in parts if p.strip()) + "\n\n"

    def _cell_block(self, cell: Tag, parent_tags: set[str]) -> str:
        cell.name = "div"  # a layout cell is just a block of content
        return super().process_tag(cell, parent_tags=parent_tags)

    def convert_td(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        return text

    convert_th = convert_td
    convert_caption = convert_td

    # Blocks ---------------------------------------------------------------

    def convert_blockquote(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        label = el.get(LABEL_ATTR)
        if label and "_inline" not in parent_tags:
            text = text.strip()
            # The label joins a leading paragraph; before a heading, list or code it
            # stands on its own line so that block keeps its markdown meaning.
            joiner = "\n\n" if _STARTS_BLOCK.match(text) else " "
            text = f"**{label}:**{joiner}{text}".strip()
        return super().convert_blockquote(el, text, parent_tags)

    def convert_dt(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        if el.get(SIGNATURE_ATTR):
            text = signature_markdown(el)
        else:
            text = " ".join(text.split())
            text = f"**{text}**" if text and not text.startswith("**") else text
        if "_inline" in parent_tags or not text:
            return f" {text} " if text else ""
        return f"\n\n{text}\n\n"

    def convert_dd(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        if "_inline" in parent_tags:
            return f" {text.strip()} "
        return f"\n\n{text.strip()}\n\n"

    # Containers markdownify treats as inline but documentation uses as blocks.
    convert_div = MarkdownConverter.convert_div
    convert_main = convert_div
    convert_header = convert_div
    convert_aside = convert_div
    convert_figure = convert_div
    convert_details = convert_div
    convert_summary = convert_div
    convert_center = convert_div
    convert_dl = convert_div

    def convert_li(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """markdownify's, with an ordered item's number counted once per list: its
        ``find_previous_siblings`` per item made a 20,000-item list cost 18 s."""
        text = (text or "").strip()
        if not text:
            return "\n"
        parent = el.parent
        if parent is not None and parent.name == "ol":
            bullet = f"{list_start(parent.get('start')) + self._items_before(parent, el)}. "
        else:
            bullet = self.options["bullets"][-1] + " "  # one bullet at every depth
        return list_item(text, bullet)

    def _items_before(self, parent: Tag, item: Tag) -> int:
        """How many <li> of ``parent`` come before ``item``, the list counted once."""
        known = self._numbered.get(id(parent))
        if known is None:
            items = (c for c in parent.children if isinstance(c, Tag) and c.name == "li")
            known = (parent, {id(li): count for count, li in enumerate(items)})
            self._numbered[id(parent)] = known  # the list held: its id stays its own
        return known[1][id(item)]

    def convert_img(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        # An inlined image (Docusaurus inlines small ones as data: URIs) is kilobytes of
        # base64 no reader can use: its alt text stands in for it, as for a local file.
        if _unsafe(el.get("src")):
            return " ".join((el.get("alt") or "").split())
        return super().convert_img(el, text, parent_tags)

    def convert_code(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        # `<code><a href=…>Files</a></code>` (a type's cross-reference): a code span
        # cannot hold the link, so the link holds the code span.
        if "_noformat" not in parent_tags and el.find("a", href=True) is not None:
            prefix, suffix, _ = chomp(el.get_text())
            linked = code_with_links(el)
            if linked:
                return f"{prefix}{linked}{suffix}"
        return super().convert_code(el, text, parent_tags)

    def convert_a(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        if _unsafe(el.get("href")):
            # file:, javascript:, data: links keep their text and lose the link; a
            # script's control drawn as a glyph ("[−]" folds the page) says nothing.
            return text if _WORD.search(text) else ""
        return super().convert_a(el, text, parent_tags)

    def escape(self, text: str, parent_tags: set[str]) -> str:
        # "<string>" in prose (Node's type names, "<name>" placeholders) would read as
        # an HTML tag: escaped, it stays text. Every "<" before a letter, not only one
        # closed in the same text: a generic type split by links ("<E extends [T](…)>")
        # is closed in a later text node.
        text = super().escape(text, parent_tags)
        return _TAG_START.sub(r"\\<", text) if "<" in text else text


# What CommonMark could read as raw HTML or an autolink: <tag ...>, </tag>, <!..., <?...
_TAG_START = re.compile(r"<(?=/?[A-Za-z!?])")
_INLINE_CONTEXT = {"td", "th"}
_NOFORMAT = {"pre", "code", "kbd", "samp"}


_REMOVES_INSIDE: dict[object, bool] = {}  # tag name -> markdownify's answer
_REMOVES_OUTSIDE: dict[object, bool] = {}
_NAMES_REMEMBERED = 1024  # a page may invent any number of tag names: memory stays bounded


def _removes_inside(el: object) -> bool:
    """markdownify's ``should_remove_whitespace_inside``, which only reads the tag's
    name: asked once per name, not with a regex per node (it is asked of every node's
    neighbours several times)."""
    return _asked_per_name(el, _REMOVES_INSIDE, should_remove_whitespace_inside)


def _removes_outside(el: object) -> bool:
    """markdownify's ``should_remove_whitespace_outside``, asked once per tag name."""
    return _asked_per_name(el, _REMOVES_OUTSIDE, should_remove_whitespace_outside)


def _asked_per_name(
    el: object, answers: dict[object, bool], question: Callable[[object], object]
) -> bool:
    if el is None:
        return False
    name = el.name  # type: ignore[attr-defined]
    found = answers.get(name)
    if found is None:
        found = bool(question(el))
        if len(answers) < _NAMES_REMEMBERED:
            answers[name] = found
    return found


def _ignorable(el: object, remove_inside: bool) -> bool:
    """Comments, and whitespace-only text at the edges of or between blocks."""
    if isinstance(el, Tag):
        return False
    if isinstance(el, (Comment, Doctype)) or not isinstance(el, NavigableString):
        return True
    if el.strip():
        return False
    if remove_inside and (not el.previous_sibling or not el.next_sibling):
        return True
    return _removes_outside(el.previous_sibling) or _removes_outside(el.next_sibling)


def _join_blocks(strings: list[str]) -> str:
    """Join child outputs, merging newlines at their edges to at most one blank line."""
    if len(strings) < 2:  # one piece is itself
        return strings[0] if strings else ""
    out = [""]  # out[-1]: the trailing newlines of the piece before
    for piece in strings:
        if piece[0] != "\n" and piece[-1] != "\n":  # most pieces: nothing to merge
            out.append(piece)
            out.append("")
            continue
        leading, content, trailing = _newline_edges(piece)
        if out[-1] and leading:
            previous = out.pop()
            leading = "\n" * min(2, max(len(previous), len(leading)))
        out.extend([leading, content, trailing])
    return "".join(out)


def _newline_edges(piece: str) -> tuple[str, str, str]:
    """markdownify's ``re_extract_newlines`` groups (leading newlines, the rest, trailing
    newlines) without a regex that scans the whole piece again at every level."""
    body = piece.lstrip("\n")
    content = body.rstrip("\n")
    return piece[: len(piece) - len(body)], content, body[len(content) :]


def list_start(start: str | None) -> int:
    """An ordered list's first number: its ``start`` when all digits, else 1."""
    return int(start) if start and start.isnumeric() else 1


def list_item(text: str, bullet: str) -> str:
    """A list item (stripped, not empty) under its bullet, markdownify's way: every line
    of content indented by the bullet's width, the bullet put in the first one's indent."""
    text = prefix_lines(text, " " * len(bullet), "")
    return bullet + text[len(bullet) :] + "\n"


def prefix_lines(text: str, prefix: str, empty: str) -> str:
    """``re_line_with_content.sub(lambda m: prefix + m.group(1) if m.group(1) else empty,
    text)`` (markdownify's indent of a list item, its quote of a blockquote) without a
    call per line: that pattern's lines are what ``split("\n")`` gives (``.`` is any
    character but a newline), an empty one included after a final newline. A list
    nested n deep is indented n times: at each level this is most of its cost."""
    return "\n".join([prefix + line if line else empty for line in text.split("\n")])


def fence(code: str, lang: str) -> str:
    """A fence longer than any backtick run in the code, so the code stays verbatim."""
    code = _EDGE_BLANK_LINES.sub("", code).rstrip()
    longest = longest_backtick_run(code)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{code}\n{ticks}"


def signature_markdown(dt: Tag) -> str:
    """An API signature as code with its cross-references kept: a code span cannot hold
    a link, so the code is cut around each one (`` `abbr(S: `[`str`](…)`)` ``). A
    signature without links is one code span."""
    return code_with_links(dt)


def code_with_links(tag: Tag) -> str:
    """Inline code holding links, as code spans cut around linked code: the links stay."""
    return linked_code(_signature_runs(tag, ""))


def linked_code(runs: list[tuple[str, str]]) -> str:
    """``code_with_links`` of the element's (text, link target) runs, in order."""
    pieces: list[list[str]] = []  # [text, href] runs, in order
    for text, href in runs:
        if pieces and pieces[-1][1] == href:
            pieces[-1][0] += text
        else:
            pieces.append([text, href])
    out = []
    for i, (text, href) in enumerate(pieces):
        text = re.sub(r"\s+", " ", text.replace("¶", ""))
        text = text.lstrip() if i == 0 else text
        text = text.rstrip() if i == len(pieces) - 1 else text
        if href and text.strip():
            out.append(f"[{code_span(text.strip())}]({_link_target(href)})")
        else:
            out.append(code_span(text) if text.strip() else text)
    return "".join(out).strip()


def _signature_runs(tag: Tag, href: str) -> list[tuple[str, str]]:
    runs: list[tuple[str, str]] = []
    for child in tag.children:
        if isinstance(child, Comment):
            continue
        if isinstance(child, NavigableString):
            runs.append((str(child), href))
        elif isinstance(child, Tag):
            target = child.get("href") if child.name == "a" else None
            own = str(target).strip() if target and not _unsafe(target) else ""
            # a link to a place in the page itself (a permalink) is no cross-reference
            runs.extend(_signature_runs(child, own if own and not own.startswith("#") else href))
    return runs


def _link_target(href: str) -> str:
    return href.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def longest_backtick_run(text: str, runs: re.Pattern[str] | None = None) -> int:
    """The longest run of backticks in ``text`` (of ``runs``' matches: "`+" unless
    given), 0 without a search where the text holds none (most code)."""
    if "`" not in text:
        return 0
    return max((len(run) for run in (runs or _BACKTICKS).findall(text)), default=0)


_BACKTICKS = re.compile(r"`+")


def code_span(text: str) -> str:
    longest = longest_backtick_run(text)
    ticks = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{ticks}{pad}{text}{pad}{ticks}" if text else ""



def table_rows(table: Tag) -> list[Tag]:
    """The table's own rows (thead, tbody, tfoot or bare), not those of nested tables."""
    rows = []
    for child in table.children:
        if not isinstance(child, Tag):
            continue
        if child.name == "tr":
            rows.append(child)
        elif child.name in ("thead", "tbody", "tfoot"):
            rows.extend(child.find_all("tr", recursive=False))
    return rows


def is_blank_row(tr: Tag) -> bool:
    """A spacer row (Doxygen's ``tr.separator``): no text, no image, nothing to keep."""
    return not tr.get_text().strip() and tr.find("img") is None


def fits_gfm(table: Tag) -> bool:
    """GFM tables hold one line of inline content per cell and no spans (spacer rows,
    dropped from the table, do not count)."""
    cells = [
        c for tr in table_rows(table) if not is_blank_row(tr) for c in tr.find_all(("td", "th"))
    ]
    if not table_rows(table):
        cells = table.find_all(("td", "th"))
    for cell in cells:
        if _span(cell, "rowspan") > 1 or _span(cell, "colspan") > 1:
            return False
        if cell.find(_BLOCK_TAGS) is not None:
            return False
    return True


def is_layout_table(table: Tag, rows: list[Tag]) -> bool:
    """A table used for layout, not data: one row (a navigation bar, a title block), one
    column, or no header row while some cell holds blocks (lists, code, headings: a
    table of blocks, Sphinx's genindex). A data table has a header row, or rows and
    columns of inline content."""
    if not rows:
        return bool(table.find(("td", "th")))
    if _has_header(table, rows):
        return False
    filled = [[c for c in _own_cells(tr) if _has_content(c)] for tr in rows]
    if len(rows) == 1 or max(len(cells) for cells in filled) <= 1:
        return True
    return any(_holds_blocks(cell) for cells in filled for cell in cells)


def _has_header(table: Tag, rows: list[Tag]) -> bool:
    if table.find("thead", recursive=False) is not None:
        return True
    first = _own_cells(rows[0])
    return bool(first) and all(cell.name == "th" for cell in first)


def _own_cells(tr: Tag) -> list[Tag]:
    return tr.find_all(("td", "th"), recursive=False)


def _has_content(cell: Tag) -> bool:
    return bool(cell.get_text(strip=True)) or cell.find("img") is not None


_CELL_BLOCKS = _BLOCK_TAGS | {"details", "hr"}


def _holds_blocks(cell: Tag) -> bool:
    """Block content GFM cannot put in a cell: lists, code, headings, nested tables,
    or more than one paragraph."""
    return cell.find(_CELL_BLOCKS) is not None or len(cell.find_all("p", limit=2)) > 1


def _bold(text: str) -> str:
    return text if not text or text.startswith(("**", "`")) else f"**{text}**"


def _span(cell: Tag, attr: str) -> int:
    value = str(cell.get(attr) or "1").strip()
    return int(value) if value.isdigit() else 1


def gfm_table(rows: list[list[str]]) -> str:
    width = max(len(row) for row in rows)
    padded = [row + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(row) + " |" for row in padded[1:]]
    return "\n".join(lines)


def html_table(table: Tag) -> str:
    """The table as compact HTML (links already absolute), for markdown's HTML blocks:
    no presentational attributes or highlight spans, no file:/javascript:/data: links."""
    for element in [table, *table.find_all(True)]:
        lang = element.get(LANG_ATTR) if element.name == "pre" else None
        element.attrs = {k: v for k, v in element.attrs.items() if k in _HTML_KEEP_ATTRS}
        if lang:  # the language stays named, as CommonMark renders a fence's
            element.attrs["class"] = f"language-{lang}"
        if _unsafe(element.get("href")) or element.name in _PRESENTATIONAL:
            element.unwrap()
        elif element.name == "img" and _unsafe(element.get("src")):
            element.replace_with(" ".join((element.get("alt") or "").split()))
    for text in table.find_all(string=True):
        if isinstance(text, NavigableString) and not text.strip() and text.parent.name != "pre":
            text.replace_with(" " if "\n" not in text else "\n")
    html = _PRE_ELEMENT.sub(_keep_pre_blank_lines, str(table))
    # A blank line would end the HTML block in CommonMark.
    return re.sub(r"\n[ \t]*\n+", "\n", html)


_PRESENTATIONAL = {"span", "font", "center", "big", "small", "tt"}
_UNSAFE_SCHEMES = ("file:", "javascript:", "data:", "vbscript:")


def _unsafe(url: object) -> bool:
    """A link no reader of the output can follow, or should: local files, scripts."""
    return isinstance(url, str) and url.strip().lower().startswith(_UNSAFE_SCHEMES)


_PRE_ELEMENT = re.compile(r"(<pre\b[^>]*>)(.*?)(</pre>)", re.DOTALL | re.IGNORECASE)


def _keep_pre_blank_lines(match: re.Match[str]) -> str:
    """A blank line in a <pre> would end the HTML block: hold it with a space entity."""
    body = re.sub(r"\n[ \t]*(?=\n)", "\n&#32;", match.group(2))
    return match.group(1) + body + match.group(3)


# ---------------------------------------------------------------- render


def render_markdown(region: HtmlElement, classes: str | None = None) -> Markdown:
    """Markdown for a pruned, link-absolute content region. ``classes``: class names
    holding all of the region's (``Extraction.classes``), if known."""
    ids = prepare_region(region, classes)
    body, blocks = convert_region(region)
    # Each clean-up runs only where it can match (a page is often a megabyte of text).
    if any(glyph in body for glyph in _GLYPHS):
        body = _HEADING_GLYPHS.sub(r"\1", body)
    body, anchors = take_anchors(body, blocks, ids)
    if " \n" in body or "\t\n" in body or body.endswith((" ", "\t")):
        body = _TRAILING_WS.sub("", body)
    if "\n\n\n" in body:
        body = _BLANK_RUNS.sub("\n\n", body)
    body = body.strip("\n")
    prose = _sub_placeholders(body, _no_block) if "\x02" in body else body
    prose = _LINK_TARGET.sub("]", prose)
    text = _restore_blocks(body, blocks) if "\x02" in body else body
    return Markdown(text, len(_WORD.findall(prose)), anchors)


def prepare_region(region: HtmlElement, classes: str | None = None) -> list[tuple[str, ...]]:
    """Annotate the region for the converter and mark its ids (returned, for
    ``take_anchors``)."""
    annotate(region, classes)
    return mark_ids(region)


def convert_region(region: HtmlElement) -> tuple[str, list[str]]:
    """The converter's markdown for an annotated region and its placeholder blocks:
    written straight from the lxml tree (``mdwriter``) where that writer reproduces the
    soup path exactly, else the soup path."""
    from .mdwriter import Unusual, write_markdown  # it builds on this module

    try:
        return write_markdown(region)
    except (Unusual, RecursionError):
        return convert_soup_path(region)


def convert_soup_path(region: HtmlElement) -> tuple[str, list[str]]:
    """``DocsConverter`` (markdownify) over a BeautifulSoup tree of the region."""
    strip_attributes(region)
    converter = DocsConverter()
    return converter.convert_soup(soup_from_lxml(region)), converter.blocks


# Permalink glyphs left as text at the end of a heading ("## Install ¶").
_HEADING_GLYPHS = re.compile(r"^(#{1,6} .*?)[ \t]*(?:[¶§🔗⚓]\ufe0f?)+[ \t]*$", re.MULTILINE)
_GLYPHS = "¶§🔗⚓"



def strip_attributes(region: HtmlElement) -> None:
    """Drop attributes the converter never reads: the soup then has less to copy. (The
    direct writer reads attributes by name and needs no stripping.)"""
    for element in region.iter():
        attrib = getattr(element, "attrib", None)
        if attrib:
            for name in [n for n in attrib if n not in _CONVERTER_ATTRS]:
                del attrib[name]


def _restore_blocks(text: str, blocks: list[str]) -> str:
    def put_back(match: re.Match[str]) -> str:
        prefix, block = match.group(1), blocks[int(match.group(2))]
        # Continuation lines keep blockquote markers; list bullets become indentation.
        follow = re.sub(r"[^>]", " ", prefix)
        lines = block.split("\n")
        out = [(prefix + lines[0]).rstrip()]
        out += [(follow + line).rstrip() if line.strip() else follow.rstrip() for line in lines[1:]]
        return "\n".join(out)

    return _sub_placeholders(text, put_back)


def _sub_placeholders(text: str, put_back: Callable[[re.Match[str]], str]) -> str:
    """``_PLACEHOLDER.sub(put_back, text)``, the pattern tried only at the start of a
    line holding a placeholder's \\x02 (its matches lie within one line, from its start:
    ``^`` and ``.`` without DOTALL), not at every line of a megabyte of text."""
    pieces = []
    done = 0
    at = text.find("\x02")
    while at >= 0:
        match = _PLACEHOLDER.match(text, text.rfind("\n", 0, at) + 1)
        if match is not None:
            pieces += [text[done : match.start()], put_back(match)]
            done = match.end()
        end = text.find("\n", at)
        if end < 0:
            break
        at = text.find("\x02", end)
    pieces.append(text[done:])
    return "".join(pieces)


def _no_block(match: re.Match[str]) -> str:
    return ""
