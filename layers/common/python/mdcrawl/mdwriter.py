"""Markdown written straight from the lxml region, the same string the soup path makes.

``render_markdown`` used to build a BeautifulSoup tree of the region (``soupbuild``) and
run ``DocsConverter`` (markdownify) over it: most of the conversion CPU. This walks the
lxml tree once (``.text``, children, ``.tail``) and reproduces that string byte for byte:
the strings bs4 would hold (whitespace-only text collapsed to " " or "\\n" outside
<pre>), markdownify's rules for dropping whitespace at block edges, its escaping, and
``DocsConverter``'s conversion of each tag it knows.

A table kept as HTML (``markdown.html_table`` serialises bs4's tree), and code or a
signature holding a <pre>, are converted by ``DocsConverter`` itself on a soup of that
element alone: their output reads nothing outside them. Anything the soup path would
not build directly (comments, processing instructions, script/style strings, a nested
html/body, a very deep tree) or a tag whose conversion reads its neighbours in ways not
ported here raises ``Unusual``: the caller then takes the soup path for the whole
region. ``tests/unit/test_markdown_writer.py`` (fragments) and
``tests/integration/test_markdown_writer_sites.py`` (real documentation trees) compare
both paths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bs4 import BeautifulSoup
from lxml.html import HtmlElement
from markdownify import (
    chomp,
    re_all_whitespace,
    re_backtick_runs,
    re_html_heading,
    re_make_convert_fn_name,
    re_newline_whitespace,
    re_whitespace,
)

from . import markdown as md
from .annotate import LABEL_ATTR, LANG_ATTR, SIGNATURE_ATTR
from .soupbuild import _URI_ATTRS, _URI_UNSAFE, _serialised_attributes, _SoupBuilder, _Unusual

# soupbuild's own rules (attribute escaping, its builder, its refusal): both must agree.
Unusual = _Unusual

# Strings bs4 files under another class (Script, Stylesheet, ...) or keeps verbatim
# (textarea), tags soupbuild leaves to the round trip, and tags whose conversion reads
# their neighbours in ways not ported here: the whole region takes the soup path.
_REFUSED = {
    "script", "style", "template", "rt", "rp", "textarea",
    "html", "head", "body", "frameset", "meta",
    "tr", "video", "list", "soup",
}  # fmt: skip
# Below a <pre> (fenced from its text) or in a table: strings of another class, or tags
# soupbuild leaves to the round trip.
_STRING_CLASSES = {"script", "style", "template", "rt", "rp"}
_STRING_CLASSES |= {"html", "head", "body", "frameset", "meta"}
_MAX_DEPTH = 150  # parse_document flattens pages to 120 levels; deeper: the soup path
_ASCII_SPACES = frozenset(BeautifulSoup.ASCII_SPACES)
_BLOCK_EDGE = frozenset(
    {"p", "blockquote", "article", "div", "section", "ol", "ul", "li", "dl", "dt", "dd"}
    | {"table", "thead", "tbody", "tfoot", "tr", "td", "th"}
)


def _block_inside(name: str) -> bool:
    """markdownify's ``should_remove_whitespace_inside``, by tag name."""
    return name in _BLOCK_EDGE or re_html_heading.match(name) is not None


def write_markdown(region: HtmlElement) -> tuple[str, list[str]]:
    """``(DocsConverter().convert_soup(soup_from_lxml(region)), converter.blocks)``,
    without the soup; raises ``Unusual`` for a region it does not reproduce."""
    writer = _Writer()
    return writer.document(region), writer.blocks


class _Writer:
    def __init__(self) -> None:
        self.blocks: list[str] = []  # fenced code and HTML tables, by placeholder index
        self._converter: md.DocsConverter | None = None
        self.depth = 0
        self.root: HtmlElement | None = None
        # id(children list) -> (that list, how many <li> come before each child): an
        # item's number counted once per list, not by a walk back per item (markdownify's
        # find_previous_siblings: a 20,000-item list cost 18 s). The list is held so its
        # id is not reused while the region is written.
        self._items_before: dict[int, tuple[list[Any], list[int]]] = {}

    def items_before(self, siblings: list[Any], index: int) -> int:
        """How many <li> elements come before ``siblings[index]``."""
        known = self._items_before.get(id(siblings))
        if known is None:
            counts, seen = [], 0
            for sibling in siblings:
                counts.append(seen)
                seen += sibling.__class__ is not str and sibling.tag == "li"
            known = self._items_before[id(siblings)] = (siblings, counts)
        return known[1][index]

    @property
    def converter(self) -> md.DocsConverter:
        """DocsConverter for delegated elements, made on first use (making one reads
        its options with ``dir``), sharing this writer's blocks."""
        if self._converter is None:
            self._converter = md.DocsConverter()
            self._converter.blocks = self.blocks
        return self._converter

    # The document: [document] > html > body > region + its tail ----------------

    def document(self, region: HtmlElement) -> str:
        name = region.tag
        if not isinstance(name, str) or name in ("html", "frameset", "head"):
            raise Unusual(repr(name))
        self.root = region
        tail = region.tail
        if name == "body":
            if tail and tail.strip(BeautifulSoup.ASCII_SPACES):
                raise Unusual("text after body")
            html = self._children("html", [region, *self._strings(tail)], None, {"[document]"})
        else:
            # html holds body alone: its output is body's
            html = self._children("body", [region, *self._strings(tail)], None,
                                  {"[document]", "html"})  # fmt: skip
        return html.strip("\n")  # convert__document_

    def _strings(self, text: str | None) -> list[str]:
        return [_collapsed(text)] if text else []

    # Children: markdownify's process_tag, process_text ------------------------

    def _children(
        self, name: str, items: list[Any], el: HtmlElement | None, parent_tags: set[str]
    ) -> str:
        """The joined output of ``items`` (strings and elements, as bs4's children) of a
        tag called ``name`` reached under ``parent_tags``. Two strings are never
        neighbours (text, then each child and its tail), so a string's neighbours are
        elements or None."""
        remove_inside = _inside(name)
        tags = parent_tags | {name}
        inline = _INLINE_CONTEXT.get(name)
        if inline is None:
            inline = _inline_context(name)
        if inline:
            tags.add("_inline")
        if name in _NOFORMAT:
            tags.add("_noformat")
        escape = "_noformat" not in tags
        strings = []
        edged = False  # a piece starts or ends with newlines: _join_blocks merges them
        last = len(items) - 1
        for i, item in enumerate(items):
            if item.__class__ is not str:
                out = self._element(item, el, items, i, tags)
                if out:
                    strings.append(out)
                    edged = edged or out[0] == "\n" or out[-1] == "\n"
                continue
            previous = items[i - 1] if i else None
            following = items[i + 1] if i < last else None
            if previous is None:
                strip_left = remove_inside
            else:
                strip_left = _OUTSIDE.get(previous.tag)
                if strip_left is None:
                    strip_left = _outside(previous.tag)
            if following is None:
                strip_right = remove_inside
            else:
                strip_right = _OUTSIDE.get(following.tag)
                if strip_right is None:
                    strip_right = _outside(following.tag)
            text = item
            if not text.strip() and (strip_left or strip_right):
                continue  # whitespace at the edge of a block, or beside one
            # DocsConverter.process_text ("pre" is never among the tags: a <pre> is
            # fenced whole)
            if "\n" in text or "\r" in text:
                text = _newlines_collapsed(text)
            if "\t" in text or "  " in text:
                text = re_whitespace.sub(" ", text)
            if escape:
                if "*" in text:
                    text = text.replace("*", r"\*")
                if "<" in text:
                    text = md._TAG_START.sub(r"\\<", text)
            if strip_left:
                text = text.lstrip(" \t\r\n")
            if strip_right:
                text = text.rstrip()
            if text:
                strings.append(text)
                edged = edged or text[0] == "\n" or text[-1] == "\n"
        return md._join_blocks(strings) if edged else "".join(strings)

    # Elements -----------------------------------------------------------------

    def _element(
        self, el: HtmlElement, parent: HtmlElement | None, siblings: list[Any], index: int,
        parent_tags: set[str],
    ) -> str:  # fmt: skip
        name = el.tag
        kind = _KINDS.get(name) or _kind(name)
        if kind is _PRE:
            return self._pre(el)
        if kind is _TABLE:
            return self._table(el, parent_tags)
        if kind is _REFUSE:
            if not (name == "body" and el is self.root):
                raise Unusual(name)
            kind = _TEXT
        convert, delegated = kind
        if delegated is not None and delegated(el):
            return self._delegate(el, parent_tags)
        if not len(el):  # a leaf (most inline elements): its one string, if any
            text = el.text
            out = _leaf_text(name, text, parent_tags) if text else ""
            return out if convert is None else convert(
                self, el, out, parent_tags, parent, siblings, index
            )
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise Unusual("deep")
        out = self._children(name, _items(el), el, parent_tags)
        self.depth -= 1
        if convert is None:
            return out
        return convert(self, el, out, parent_tags, parent, siblings, index)

    def _pre(self, el: HtmlElement) -> str:
        """A <pre> is fenced whole (``DocsConverter.process_tag``): its text as bs4 holds
        it, which is lxml's unless a string of another class sits inside."""
        for inner in el.iter():
            tag = inner.tag
            if tag.__class__ is not str or tag in _STRING_CLASSES:
                raise Unusual(repr(tag))
        code = str(el.text_content())
        return self._placeholder(md.fence(code, el.get(LANG_ATTR) or ""))

    def _table(self, table: HtmlElement, parent_tags: set[str]) -> str:
        """``DocsConverter._table``: a data table GFM can hold is written here; a layout
        table (flattened into blocks) or one kept as HTML is delegated."""
        for inner in table.iter():
            tag = inner.tag
            if tag.__class__ is not str:
                raise Unusual(repr(tag))
            if tag in _STRING_CLASSES or tag == "textarea":
                return self._delegate(table, parent_tags)
        rows = [tr for tr in _table_rows(table) if not _is_blank_row(tr)]
        if _is_layout_table(table, rows):
            return self._flatten(table, rows, parent_tags)
        if not _fits_gfm(table):
            return self._delegate(table, parent_tags)
        cells = [[self._cell_text(cell) for cell in _own_cells(tr)] for tr in rows]
        cells = [row for row in cells if row]
        if not cells:
            return ""
        caption = next((c for c in table.iter("caption")), None)
        title = f"{self._cell_text(caption)}\n\n" if caption is not None else ""
        return "\n\n" + title + md.gfm_table(cells) + "\n\n"

    def _flatten(self, table: HtmlElement, rows: list[HtmlElement], parent_tags: set[str]) -> str:
        """``DocsConverter._flatten``: a layout table as the blocks it lays out."""
        if not rows:
            rows = [table]
        parts: list[str] = []
        for tr in rows:
            cells = [c for c in _own_cells(tr) if _has_content(c)]
            if cells and not any(_holds_blocks(c) for c in cells):
                parts.append(" ".join(p for p in map(self._inline_cell, cells) if p))
            elif len(cells) == 2 and not _holds_blocks(cells[0]):
                term = self._inline_cell(cells[0])
                parts += [md._bold(term), self._cell_block(cells[1], parent_tags)]
            else:
                parts += [self._cell_block(cell, parent_tags) for cell in cells]
        return "\n\n" + "\n\n".join(p.strip("\n") for p in parts if p.strip()) + "\n\n"

    def _inline_cell(self, cell: HtmlElement) -> str:
        """``DocsConverter._inline``: the cell's inline markdown on one line."""
        return " ".join(self._element(cell, cell.getparent(), [], 0, {"_inline"}).split())

    def _cell_block(self, cell: HtmlElement, parent_tags: set[str]) -> str:
        """``DocsConverter._cell_block``: the cell as a <div> (the soup path renames it),
        which its children see as their parent."""
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise Unusual("deep")
        out = self._children("div", _items(cell), _AsDiv(cell), parent_tags)  # type: ignore[arg-type]
        self.depth -= 1
        return _div(self, cell, out, parent_tags)

    def _cell_text(self, cell: HtmlElement) -> str:
        """``DocsConverter._cell_text``: the cell's inline markdown on one line."""
        text = self._element(cell, cell.getparent(), [], 0, {"_inline"})
        return " ".join(text.split()).replace("|", r"\|")

    def _placeholder(self, block: str) -> str:
        self.blocks.append(block)
        return f"\n\n\x02{len(self.blocks) - 1}\x03\n\n"

    def _delegate(self, el: HtmlElement, parent_tags: set[str]) -> str:
        """The element converted by ``DocsConverter`` on a soup of it alone."""
        md.strip_attributes(el)
        soup = BeautifulSoup("", "lxml", multi_valued_attributes=None)
        try:
            _SoupBuilder(soup).build(el)
        except RecursionError as error:
            raise Unusual("deep") from error
        tag = soup.contents[0].contents[0].contents[0]  # html > body > el
        return self.converter.process_tag(tag, parent_tags)


_INSIDE: dict[str, bool] = {}  # tag name -> markdownify's should_remove_whitespace_inside
_OUTSIDE: dict[str, bool] = {}  # ... should_remove_whitespace_outside
Kind = tuple[Any, Any]
_KINDS: dict[str, Kind] = {}  # tag name -> (conversion, test for delegation)
_PRE: Kind = ("pre", None)  # sentinels, told apart by identity
_REFUSE: Kind = ("refuse", None)
_TABLE: Kind = ("table", None)
_TEXT: Kind = (None, None)


def _inside(name: str) -> bool:
    found = _INSIDE.get(name)
    if found is None:
        found = _block_inside(name)
        if len(_INSIDE) < _NAMES_KEPT:
            _INSIDE[name] = found
    return found


_INLINE_CONTEXT: dict[str, bool] = {}  # tag name -> its children are written inline


def _inline_context(name: str) -> bool:
    """A cell or a heading: what is inside is written on one line (markdownify's
    ``_inline`` among the parent tags), asked once per tag name, not by a regex per
    element."""
    found = name in ("td", "th") or re_html_heading.match(name) is not None
    if len(_INLINE_CONTEXT) < _NAMES_KEPT:
        _INLINE_CONTEXT[name] = found
    return found


def _outside(name: str) -> bool:
    found = _block_inside(name) or name == "pre"
    if len(_OUTSIDE) < _NAMES_KEPT:
        _OUTSIDE[name] = found
    return found


def _kind(name: str) -> Kind:
    """How an element of this name is written: refused, fenced (<pre>), converted (by
    a port of its DocsConverter conversion, or delegated), or its text alone."""
    if name in _REFUSED:
        kind = _REFUSE
    elif name == "pre":
        kind = _PRE
    elif name == "table":
        kind = _TABLE
    elif name in _CONVERTERS or name in _DELEGATED:
        kind = (_CONVERTERS.get(name), _DELEGATED.get(name))
    elif not hasattr(md.DocsConverter, "convert_" + re_make_convert_fn_name.sub("_", name.lower())):
        kind = (_heading if re_html_heading.match(name) else None, None)
    else:  # a conversion not ported here (<video>, <tr> outside a table)
        kind = _REFUSE
    if len(_KINDS) < _NAMES_KEPT:
        _KINDS[name] = kind
    return kind


_NOFORMAT = md._NOFORMAT
_NAMES_KEPT = 1024  # a page may invent any number of tag names: memory stays bounded


def _items(el: HtmlElement) -> list[Any]:
    """The element's children as bs4 holds them: its strings (collapsed) and elements."""
    items: list[Any] = []
    text = el.text
    if text:
        items.append(_collapsed(text))
    for child in el:
        if child.tag.__class__ is not str:  # a comment, processing instruction, entity
            raise Unusual(repr(child))
        items.append(child)
        tail = child.tail
        if tail:
            items.append(_collapsed(tail))
    return items


class _AsDiv:
    """A layout cell as its children see it in the soup path: renamed <div>."""

    tag = "div"

    def __init__(self, cell: HtmlElement) -> None:
        self.get = cell.get


def _leaf_text(name: str, text: str, parent_tags: set[str]) -> str:
    """``_children`` of an element holding one string and nothing else (no neighbours:
    both its edges are the element's)."""
    text = _collapsed(text)
    remove_inside = _inside(name)
    if remove_inside and not text.strip():
        return ""
    if "\n" in text or "\r" in text:
        text = _newlines_collapsed(text)
    if "\t" in text or "  " in text:
        text = re_whitespace.sub(" ", text)
    if "_noformat" not in parent_tags and name not in _NOFORMAT:
        if "*" in text:
            text = text.replace("*", r"\*")
        if "<" in text:
            text = md._TAG_START.sub(r"\\<", text)
    if remove_inside:
        text = text.lstrip(" \t\r\n").rstrip()
    return text


def _newlines_collapsed(text: str) -> str:
    """``re_newline_whitespace.sub("\\n", text)``: a run of blanks holding a line break
    becomes one "\\n". Where every line break is a lone "\\n" (no "\\r", no blank
    beside it: most wrapped text) each run is that "\\n" already, and the regex is not
    run."""
    if (
        "\r" in text or "\n\n" in text or " \n" in text or "\n " in text
        or "\t\n" in text or "\n\t" in text
    ):  # fmt: skip
        return re_newline_whitespace.sub("\n", text)
    return text


def _collapsed(text: str) -> str:
    """A string as bs4 holds it outside <pre>: whitespace-only text becomes one
    newline or one space."""
    if _ASCII_SPACES.issuperset(text):
        return "\n" if "\n" in text else " "
    return text


def _attrs(el: HtmlElement) -> dict[str, str]:
    """The element's attributes as the soup holds them (URI attributes escaped as the
    serialiser writes them)."""
    items = el.items()
    for key, value in items:
        if key in _URI_ATTRS and _URI_UNSAFE.search(value):
            return _serialised_attributes(el)
    return dict(items)


# Conversions: DocsConverter's and markdownify's, with the tree they read -------------

Convert = Callable[..., str]


def _div(w: _Writer, el: HtmlElement, text: str, tags: set[str], *_: Any) -> str:
    if "_inline" in tags:
        return " " + text.strip() + " "
    text = text.strip()
    return f"\n\n{text}\n\n" if text else ""


def _p(w: _Writer, el: HtmlElement, text: str, tags: set[str], *_: Any) -> str:
    if "_inline" in tags:
        return " " + text.strip(" \t\r\n") + " "
    text = text.strip(" \t\r\n")
    return f"\n\n{text}\n\n" if text else ""


def _heading(w: _Writer, el: HtmlElement, text: str, tags: set[str], *_: Any) -> str:
    if "_inline" in tags:
        return text
    n = max(1, min(6, int(re_html_heading.match(el.tag).group(1))))  # type: ignore[union-attr]
    text = text.strip()
    if "\n" in text or "\t" in text or "\r" in text or "  " in text:
        text = re_all_whitespace.sub(" ", text)
    return f"\n\n{'#' * n} {text}\n\n"


def _inline(symbol: str) -> Convert:
    """markdownify's ``abstract_inline_conversion``."""

    def convert(w: _Writer, el: HtmlElement, text: str, tags: set[str], *_: Any) -> str:
        if "_noformat" in tags:
            return text
        prefix, suffix, text = chomp(text)
        if not text:
            return ""
        return f"{prefix}{symbol}{text}{symbol}{suffix}"

    return convert


def _code(w: _Writer, el: HtmlElement, text: str, tags: set[str], *_: Any) -> str:
    if "_noformat" in tags:
        return text
    prefix, suffix, text = chomp(text)
    if not text:
        return ""
    max_backticks = md.longest_backtick_run(text, re_backtick_runs)
    delimiter = "`" * (max_backticks + 1)
    if max_backticks > 0:
        text = " " + text + " "
    return f"{prefix}{delimiter}{text}{delimiter}{suffix}"


def _a(w: _Writer, el: HtmlElement, text: str, tags: set[str], *_: Any) -> str:
    attrs = _attrs(el)
    href = attrs.get("href")
    if md._unsafe(href):
        return text if md._WORD.search(text) else ""
    if "_noformat" in tags:
        return text
    prefix, suffix, text = chomp(text)
    if not text:
        return ""
    title = attrs.get("title")
    if text.replace(r"\_", "_") == href and not title:
        return f"<{href}>"
    title_part = ' "' + title.replace('"', r"\"") + '"' if title else ""
    return f"{prefix}[{text}]({href}{title_part}){suffix}" if href else text


def _img(
    w: _Writer, el: HtmlElement, text: str, tags: set[str], parent: HtmlElement | None, *_: Any
) -> str:
    attrs = _attrs(el)
    if md._unsafe(attrs.get("src")):
        return " ".join((attrs.get("alt") or "").split())
    alt = attrs.get("alt") or ""
    src = attrs.get("src") or ""
    title = attrs.get("title") or ""
    title_part = ' "' + title.replace('"', r"\"") + '"' if title else ""
    parent_name = parent.tag if parent is not None else "body"
    if "_inline" in tags and parent_name not in ("td", "th"):
        return alt
    return f"![{alt}]({src}{title_part})"


def _br(w: _Writer, el: HtmlElement, text: str, tags: set[str], *_: Any) -> str:
    if "_inline" in tags:
        return text + " " if text else " "
    return "\\\n" + text


def _hr(*_: Any) -> str:
    return "\n\n---\n\n"


def _blockquote(w: _Writer, el: HtmlElement, text: str, tags: set[str], *_: Any) -> str:
    label = el.get(LABEL_ATTR)
    if label and "_inline" not in tags:
        text = text.strip()
        joiner = "\n\n" if md._STARTS_BLOCK.match(text) else " "
        text = f"**{label}:**{joiner}{text}".strip()
    text = (text or "").strip(" \t\r\n")
    if "_inline" in tags:
        return " " + text + " "
    if not text:
        return "\n"
    text = md.prefix_lines(text, "> ", ">")
    return "\n" + text + "\n\n"


def _dt(w: _Writer, el: HtmlElement, text: str, tags: set[str], *_: Any) -> str:
    text = " ".join(text.split())
    text = f"**{text}**" if text and not text.startswith("**") else text
    if "_inline" in tags or not text:
        return f" {text} " if text else ""
    return f"\n\n{text}\n\n"


def _dd(w: _Writer, el: HtmlElement, text: str, tags: set[str], *_: Any) -> str:
    if "_inline" in tags:
        return f" {text.strip()} "
    return f"\n\n{text.strip()}\n\n"


def _list(
    w: _Writer,
    el: HtmlElement,
    text: str,
    tags: set[str],
    parent: HtmlElement | None,
    siblings: list[Any],
    index: int,
) -> str:
    before_paragraph = False
    for position in range(index + 1, len(siblings)):  # no copy of the rest per list
        following = siblings[position]  # markdownify's _next_block_content_sibling
        if following.__class__ is str:
            if following.strip() != "":
                before_paragraph = True
                break
        else:
            before_paragraph = following.tag not in ("ul", "ol")
            break
    if "li" in tags:
        return "\n" + text.rstrip()
    return "\n\n" + text + ("\n" if before_paragraph else "")


def _li(
    w: _Writer,
    el: HtmlElement,
    text: str,
    tags: set[str],
    parent: HtmlElement | None,
    siblings: list[Any],
    index: int,
) -> str:
    text = (text or "").strip()
    if not text:
        return "\n"
    if parent is not None and parent.tag == "ol":
        bullet = f"{md.list_start(parent.get('start')) + w.items_before(siblings, index)}. "
    else:
        bullet = md.DocsConverter.Options.bullets[-1] + " "  # one bullet at every depth
    return md.list_item(text, bullet)


def _q(w: _Writer, el: HtmlElement, text: str, *_: Any) -> str:
    return '"' + text + '"'


def _same(w: _Writer, el: HtmlElement, text: str, *_: Any) -> str:
    return text


def _figcaption(w: _Writer, el: HtmlElement, text: str, *_: Any) -> str:
    return "\n\n" + text.strip() + "\n\n"


_CONVERTERS: dict[str, Convert] = {
    **dict.fromkeys(
        ("div", "article", "section", "main", "header", "aside", "figure", "details")
        + ("summary", "center", "dl"),
        _div,
    ),
    "p": _p,
    **dict.fromkeys(("b", "strong"), _inline("**")),
    **dict.fromkeys(("em", "i"), _inline("*")),
    **dict.fromkeys(("del", "s"), _inline("~~")),
    **dict.fromkeys(("sub", "sup"), _inline("")),
    **dict.fromkeys(("code", "kbd", "samp"), _code),
    "a": _a,
    "img": _img,
    "br": _br,
    "hr": _hr,
    "blockquote": _blockquote,
    "dt": _dt,
    "dd": _dd,
    "ul": _list,
    "ol": _list,
    "li": _li,
    "q": _q,
    **dict.fromkeys(("td", "th", "caption"), _same),
    "figcaption": _figcaption,
}


def _linked_code(w: _Writer, el: HtmlElement, text: str, tags: set[str], *_: Any) -> str:
    """``DocsConverter.convert_code``: a code span cannot hold a link, so the link holds
    the code span."""
    if "_noformat" not in tags and _holds_link(el):
        runs = _runs(el, "", [])
        prefix, suffix, _ = chomp("".join(run for run, _ in runs))
        linked = md.linked_code(runs)
        if linked:
            return f"{prefix}{linked}{suffix}"
    return _code(w, el, text, tags)


def _signature_dt(w: _Writer, el: HtmlElement, text: str, tags: set[str], *rest: Any) -> str:
    """``DocsConverter.convert_dt``: a signature is code with its links kept."""
    if not el.get(SIGNATURE_ATTR):
        return _dt(w, el, text, tags, *rest)
    text = md.linked_code(_runs(el, "", []))
    if "_inline" in tags or not text:
        return f" {text} " if text else ""
    return f"\n\n{text}\n\n"


def _holds_link(el: HtmlElement) -> bool:
    """bs4's ``find("a", href=True)``: any <a> below with an href, even an empty one."""
    if not len(el):  # a leaf (most code spans): nothing below it
        return False
    return any(a.get("href") is not None for a in el.iter("a") if a is not el)


def _runs(el: HtmlElement, href: str, runs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``markdown._signature_runs`` on the lxml tree: the strings below ``el`` as the
    soup holds them, each with the link target it sits under."""
    text = el.text
    if text:
        runs.append((_collapsed(text), href))
    for child in el:
        target = _attrs(child).get("href") if child.tag == "a" else None
        own = str(target).strip() if target and not md._unsafe(target) else ""
        _runs(child, own if own and not own.startswith("#") else href, runs)
        tail = child.tail
        if tail:
            runs.append((_collapsed(tail), href))
    return runs


_CONVERTERS["code"] = _linked_code
_CONVERTERS["dt"] = _signature_dt


def _holds_verbatim(el: HtmlElement) -> bool:
    """Strings below a <pre> or <textarea> keep their whitespace in the soup: code and
    signatures holding one are left to DocsConverter."""
    if not len(el):  # a leaf (most code spans), itself no <pre> or <textarea>
        return False
    return next(el.iter("pre", "textarea"), None) is not None


# Elements DocsConverter converts from more of the tree than their text: each is
# converted by DocsConverter on a soup of it alone (when the test says so).
_DELEGATED: dict[str, Callable[[HtmlElement], bool]] = {
    "code": _holds_verbatim,
    "dt": _holds_verbatim,
}


# Tables: markdown.py's questions about a table, asked of the lxml tree ---------------
# (bs4's get_text emptiness is lxml's: bs4 only collapses whitespace-only strings.)


def _table_rows(table: HtmlElement) -> list[HtmlElement]:
    rows = []
    for child in table:
        if child.tag == "tr":
            rows.append(child)
        elif child.tag in ("thead", "tbody", "tfoot"):
            rows.extend(tr for tr in child if tr.tag == "tr")
    return rows


def _is_blank_row(tr: HtmlElement) -> bool:
    return not tr.text_content().strip() and next(tr.iter("img"), None) is None


def _own_cells(tr: HtmlElement) -> list[HtmlElement]:
    return [cell for cell in tr if cell.tag in ("td", "th")]


def _descendants(el: HtmlElement, *names: str) -> Any:
    return (found for found in el.iter(*names) if found is not el)


def _has_content(cell: HtmlElement) -> bool:
    return bool(cell.text_content().strip()) or next(_descendants(cell, "img"), None) is not None


def _holds_blocks(cell: HtmlElement) -> bool:
    if next(_descendants(cell, *md._CELL_BLOCKS), None) is not None:
        return True
    return sum(1 for _ in zip(range(2), _descendants(cell, "p"), strict=False)) > 1


def _has_header(table: HtmlElement, rows: list[HtmlElement]) -> bool:
    if any(child.tag == "thead" for child in table):
        return True
    first = _own_cells(rows[0])
    return bool(first) and all(cell.tag == "th" for cell in first)


def _is_layout_table(table: HtmlElement, rows: list[HtmlElement]) -> bool:
    if not rows:
        return next(_descendants(table, "td", "th"), None) is not None
    if _has_header(table, rows):
        return False
    filled = [[c for c in _own_cells(tr) if _has_content(c)] for tr in rows]
    if len(rows) == 1 or max(len(cells) for cells in filled) <= 1:
        return True
    return any(_holds_blocks(cell) for cells in filled for cell in cells)


def _fits_gfm(table: HtmlElement) -> bool:
    rows = _table_rows(table)
    if rows:
        cells = [c for tr in rows if not _is_blank_row(tr) for c in _descendants(tr, "td", "th")]
    else:
        cells = list(_descendants(table, "td", "th"))
    for cell in cells:
        if _span(cell, "rowspan") > 1 or _span(cell, "colspan") > 1:
            return False
        if next(_descendants(cell, *md._BLOCK_TAGS), None) is not None:
            return False
    return True


def _span(cell: HtmlElement, attr: str) -> int:
    value = str(cell.get(attr) or "1").strip()
    return int(value) if value.isdigit() else 1
