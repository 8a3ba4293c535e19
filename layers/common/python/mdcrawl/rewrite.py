"""Markdown text surgery for the assembled outputs: links, headings, anchors.

Pure string functions. Everything here skips code: fenced blocks (``` and ~~~, also
inside blockquotes and list items) and inline code spans are copied untouched, so a
URL or a ``# comment`` inside an example is never rewritten. Indented code blocks
are not recognised on purpose: our converter fences every code block, while list
continuation paragraphs are indented by four spaces and must stay rewritable.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from urllib.parse import urlsplit, urlunsplit

# Returns the new target for a link URL, or None to leave the link as it is.
Resolver = Callable[[str], "str | None"]

_FENCE_OPEN = re.compile(r"^(?:[ \t]*>)*[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")
# A backtick run not after a backtick or backslash (the lookbehind sits after the first
# backtick: a pattern led by a literal is searched for at C speed, one led by a
# lookbehind is tried at every character).
_CODE_SPAN = re.compile(
    r"(?P<ticks>`(?<![`\\]`)`*)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)(?P=ticks)(?!`)", re.S
)
_DEST = r"(?P<{name}><[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
_LINK = re.compile(
    r"(?P<inline_lead>(?<!\\)\]\([ \t]*)"
    + _DEST.format(name="inline")
    + r"|(?P<refdef_lead>^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*)"
    + _DEST.format(name="refdef")
    + r"|<(?P<auto>[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*)>"
    + r"|(?P<href_lead>\bhref=(?P<q>[\"']))(?P<href>[^\"'\n]*)(?P=q)",
    re.M,
)
# ``_LINK`` where no reference definition can be (no "]:"): each branch led by a literal
# (the lookbehinds moved past it), so the engine skips to a "]", "<" or "h" at C speed
# instead of trying every branch at every character. Same matches, same groups but the
# leads (``_lead``).
_LINK_NO_REFDEF = re.compile(
    r"\](?<!\\\])\([ \t]*"
    + _DEST.format(name="inline")
    + r"|<(?P<auto>[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*)>"
    + r"|h(?<!\w.)ref=(?P<q>[\"'])(?P<href>[^\"'\n]*)(?P=q)"
)
_ATX = re.compile(
    r"^(?P<indent> {0,3})(?P<hashes>#{1,6})(?:[ \t]+(?P<text>.*?))?(?:[ \t]+#+)?[ \t]*$"
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def iter_lines(markdown: str) -> Iterator[tuple[str, bool]]:
    """Each line (with its newline) and whether it belongs to a fenced code block."""
    fence: str | None = None
    for line in markdown.splitlines(keepends=True):
        if fence is None:
            fence = fence_opened(line)
            yield line, fence is not None
        else:
            yield line, True
            if closes_fence(line, fence):
                fence = None


def fence_opened(line: str) -> str | None:
    """The fence (its run of backticks or tildes) a line outside code opens, or None."""
    opened = _FENCE_OPEN.match(line.rstrip("\r\n"))
    if opened and not (opened["fence"][0] == "`" and "`" in opened["info"]):
        return opened["fence"]
    return None


def closes_fence(line: str, fence: str) -> bool:
    """Whether a line inside code opened by ``fence`` closes it."""
    body = line.strip().lstrip("> \t").rstrip()
    return len(body) >= len(fence) and set(body) == {fence[0]}


# The assembler reads each page's text twice in a row (its links then its repeated
# lines; its warnings twice, from the text as written): the last two texts' stretches
# are kept, found again by the text (its hash is computed once per string object), no
# more (a page's text and its stretches stay alive while kept).
@functools.lru_cache(maxsize=2)
def segments(markdown: str) -> tuple[tuple[str, bool], ...]:
    """The text cut into prose and fenced-code stretches, as (text, in_code): the same
    reading as ``iter_lines``, but only lines that look like fences are looked at in
    Python (the assembler runs this over every page twice: it is on the hot path)."""
    return tuple(_segments(markdown, _fence_lines(markdown, _STRICT_LEAD)))


def _segments(markdown: str, lines: Iterator[tuple[int, int]]) -> list[tuple[str, bool]]:
    """``segments`` reading the fence candidates ``lines`` (start, end of each line)."""
    out: list[tuple[str, bool]] = []
    start, fence = 0, None
    for line_start, line_end in lines:
        line = markdown[line_start:line_end].rstrip("\r")
        if fence is None:
            fence = fence_opened(line)
            if fence is not None:
                out.append((markdown[start:line_start], False))
                start = line_start
        elif line_start > start and closes_fence(line, fence):
            end = line_end + (markdown[line_end : line_end + 1] == "\n")
            out.append((markdown[start:end], True))
            start, fence = end, None
    out.append((markdown[start:], fence is not None))
    return [(text, in_code) for text, in_code in out if text]


# A fence line's first ``` or ~~~ comes right after its lead: only spaces, tabs and ">",
# or for ``iter_lines``' closing test (``str.strip``) any white space and ">". A line is
# looked at only where such a mark is, found by ``str.find`` (where ``^``-anchored
# patterns under re.M are tried at every character).
_STRICT_LEAD = " \t>"


def _fence_lines(markdown: str, lead: str | None) -> Iterator[tuple[int, int]]:
    """(start, end) of every line whose first fence mark follows a lead made of the
    characters ``lead`` (None: white space and ">"), the line break excluded."""
    ticks, tildes = markdown.find("```"), markdown.find("~~~")
    while ticks >= 0 or tildes >= 0:
        at = tildes if ticks < 0 or 0 <= tildes < ticks else ticks
        line_start = markdown.rfind("\n", 0, at) + 1
        line_end = markdown.find("\n", at)
        if line_end < 0:
            line_end = len(markdown)
        prefix = markdown[line_start:at]
        if not (prefix.strip(lead) if lead else prefix.replace(">", "").strip()):
            yield line_start, line_end
        if 0 <= ticks < line_end:
            ticks = markdown.find("```", line_end)
        if 0 <= tildes < line_end:
            tildes = markdown.find("~~~", line_end)


def map_text(markdown: str, change: Callable[[str], str]) -> str:
    """Apply ``change`` to every stretch of text outside fenced and inline code."""
    return "".join(
        text if in_code else _map_prose(text, change) for text, in_code in segments(markdown)
    )


def _map_prose(text: str, change: Callable[[str], str]) -> str:
    if not text:
        return text
    out, start = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [change(text[start : span.start()]), span.group()]
        start = span.end()
    out.append(change(text[start:]))
    return "".join(out)


def rewrite_links(markdown: str, resolve: Resolver) -> str:
    """Give every link target (inline links and images, reference definitions,
    autolinks, raw ``href``) to ``resolve`` and put its answer in place; code is skipped."""
    return map_text(
        markdown, lambda text: _link_pattern(text).sub(lambda m: _relink(m, resolve), text)
    )


def _link_pattern(text: str) -> re.Pattern[str]:
    return _LINK if "]:" in text else _LINK_NO_REFDEF


def rewrite_links_twice(
    markdown: str,
    first: Resolver,
    second: Resolver,
    shift: int = 0,
    links: LinkMemo | None = None,
) -> tuple[str, str]:
    """``(rewrite_links(markdown, first), relevel(rewrite_links(markdown, second), shift))``
    from one reading of the text: the fences, code spans and links are found once (the
    assembler writes every page twice, to its own file and to docs.md). ``links``: the
    links read on earlier pages (``LinkMemo``), kept by the caller across pages."""
    one: list[str] = []
    two: list[str] = []
    links = {} if links is None else links
    irregular = _irregular(markdown)
    for text, in_code in segments(markdown):
        if in_code:
            one.append(text)
            two.append(text)
            continue
        a, b = _relink_prose_twice(text, first, second, links)
        one.append(a)
        two.append(b if irregular or not shift else _relevel_prose(b, shift))
    relinked = "".join(two)
    # Rare characters (other line breaks, unusual leading white space) make the line
    # reading of ``iter_lines`` differ from ``segments``: then relevel the plain way.
    return "".join(one), relevel(relinked, shift) if irregular and shift else relinked


def _relink_prose_twice(
    text: str, first: Resolver, second: Resolver, links: LinkMemo
) -> tuple[str, str]:
    if not text:
        return text, text
    one: list[str] = []
    two: list[str] = []
    start = 0
    for span in _CODE_SPAN.finditer(text):
        _relink_piece_twice(text[start : span.start()], first, second, one, two, links)
        one.append(span.group())
        two.append(span.group())
        start = span.end()
    _relink_piece_twice(text[start:], first, second, one, two, links)
    return "".join(one), "".join(two)


def _relink_piece_twice(
    piece: str, first: Resolver, second: Resolver, one: list[str], two: list[str], known: LinkMemo
) -> None:
    """``_LINK.sub`` with each resolver (its matches are never empty), sharing the scan
    and the reading of each link. What ``second`` made of a link is kept with it
    (``LinkMemo``), and what ``first`` made of it last (the same answer again: the
    rewritten link again)."""
    start = 0
    for match in _link_pattern(piece).finditer(piece):
        text = match.group()
        link = known.get(text) or _read_link(match, known)
        before = piece[start : match.start()]
        start = match.end()
        target = first(link.bare)
        one.append(before)
        if target is None:
            one.append(text)
        elif target is link.first_target:
            one.append(link.first_text)
        else:
            link.first_target = target
            link.first_text = link.pointing_at(target)
            one.append(link.first_text)
        two.append(before)
        if link.second_text is None:
            target = second(link.bare)
            link.second_text = text if target is None else link.pointing_at(target)
        two.append(link.second_text)
    rest = piece[start:]
    one.append(rest)
    two.append(rest)


class _Link:
    """One matched link read once: its target as resolvers get it, how to write it
    pointing elsewhere (what ``_relinked`` does), and what the resolvers of
    ``rewrite_links_twice`` made of it."""

    __slots__ = ("bare", "_head", "_tail", "first_target", "first_text", "second_text")

    def __init__(self, match: re.Match[str]) -> None:
        kind = match.lastgroup or ""  # the link's own group closes last in each branch
        url = match[kind]
        bracketed = url.startswith("<") and url.endswith(">")
        self.bare = url[1:-1] if bracketed else url
        if kind == "auto":
            self._head, self._tail = "[" + url + "](", ")"
        else:
            lead = match.string[match.start() : match.start(kind)]  # "](", "[x]: ", 'href="'
            self._head = lead + ("<" if bracketed else "")
            self._tail = (">" if bracketed else "") + (match["q"] if kind == "href" else "")
        self.first_target: str | None = None  # first's last answer, and the link it made
        self.first_text = ""
        self.second_text: str | None = None  # the link as second rewrote it

    def pointing_at(self, target: str) -> str:
        return self._head + target + self._tail


# Links by their matched text (lead and destination): the same nav and cross-reference
# links recur on every page of a site (Rust core: 300,000 links, 19,000 distinct), and
# what a match reads as depends on its text alone. Kept by the caller for one assembly,
# whose ``second`` resolver must answer the same for a URL all along (its answer is kept
# with the link); bounded (under 3 MB): cleared when full.
LinkMemo = dict[str, _Link]
_MAX_LINKS = 4096


def _read_link(match: re.Match[str], known: LinkMemo) -> _Link:
    if len(known) >= _MAX_LINKS:
        known.clear()
    link = known[match.group()] = _Link(match)
    return link


def _relink(match: re.Match[str], resolve: Resolver) -> str:
    kind = match.lastgroup or ""
    url = match[kind]
    bracketed = url.startswith("<") and url.endswith(">")
    return _relinked(match, kind, url, bracketed, resolve(url[1:-1] if bracketed else url))


def _relinked(
    match: re.Match[str], kind: str, url: str, bracketed: bool, target: str | None
) -> str:
    """The link ``match`` pointing at ``target`` (None: as it was)."""
    if target is None:
        return match.group()
    if kind == "auto":
        return f"[{url}]({target})"
    if bracketed:
        target = f"<{target}>"
    lead = match.string[match.start() : match.start(kind)]  # "](", "[x]: ", "href=\""
    return lead + target + (match["q"] if kind == "href" else "")


def url_key(url: str) -> str:
    """A URL reduced to what identifies a page: no fragment, lower-case scheme and
    host, no default port, ``/index.html`` read as ``/``. Used to match links to pages."""
    # The fragment is no part of the key, so it is cut before the (cached) work: the
    # links into one page ("#str.join", "#str.split"...) share one key's computation.
    # Cut at the first "#", as urlsplit cuts it (its netloc ends there too).
    return _page_key(url.strip().partition("#")[0])


def fragment_of(url: str) -> str:
    """``urlsplit(url).fragment``, without the split where nothing but the first "#"
    can decide it (no tab or line break, which urlsplit drops anywhere in the URL)."""
    if "\t" in url or "\r" in url or "\n" in url:
        return urlsplit(url).fragment
    return url.partition("#")[2]


@functools.lru_cache(maxsize=65536)  # the same nav links recur on every page
def _page_key(url: str) -> str:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    path = re.sub(r"/index\.html?$", "/", parts.path or "/")
    return urlunsplit((scheme, netloc, path, parts.query, ""))


# Where ``iter_lines`` (str.splitlines, str.strip) and ``segments`` (\n, [ \t]) could read
# the lines differently: other line breaks, or other white space leading a line. Tested
# with ``in`` and a pattern led by a literal "\n" (both searched at C speed; a character
# class or a ``^`` under re.M is tried at every character, twice per page).
_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # str.splitlines' but \n
_FIRST_LEAD = re.compile(r"[ \t]*[^\S\n \t]")  # any white space but \n, space and tab
_LATER_LEAD = re.compile(r"\n[ \t]*[^\S\n \t]")


def _irregular(markdown: str) -> bool:
    """Other line breaks than \\n, or a line led by other white space than spaces and
    tabs."""
    return (
        any(brk in markdown for brk in _BREAKS)
        or _FIRST_LEAD.match(markdown) is not None
        or _LATER_LEAD.search(markdown) is not None
    )


# Lines that may be ATX headings; ``atx_heading`` reads each (``_ATX`` with re.M would
# try its lazy text at every character of every heading line: API pages have thousands
# of headings hundreds of characters long).
# Found from the "\n" that ends the line before (a literal the engine searches for at C
# speed), the text's first line on its own.
_FIRST_HEADING_LINE = re.compile(r" {0,3}#[^\n]*")
_LATER_HEADING_LINE = re.compile(r"\n( {0,3}#[^\n]*)")
_ATX_OPENING = re.compile(r" {0,3}(#{1,6})")


def atx_heading(line: str) -> tuple[int, str] | None:
    """``_ATX.match(line)`` read as (level, raw text): the same answer without the
    regex's lazy text. ``line`` has no line break."""
    opening = _ATX_OPENING.match(line)
    if opening is None:
        return None
    rest = line[opening.end() :]
    if not rest:
        return len(opening[1]), ""
    if rest[0] not in " \t":
        return None  # seven #s, or "#word": no heading
    text = rest.lstrip(" \t").rstrip(" \t")
    unhashed = text.rstrip("#")
    if unhashed != text and unhashed[-1:] in (" ", "\t"):
        text = unhashed.rstrip(" \t")  # a closing sequence: " ##"
    return len(opening[1]), text


def _heading_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` led by at most three spaces and a "#" (``^ {0,3}#`` under
    re.M)."""
    first = _FIRST_HEADING_LINE.match(text)
    if first is not None:
        yield first.group()
    for match in _LATER_HEADING_LINE.finditer(text):
        yield match[1]


def _prose_headings(text: str) -> Iterator[tuple[int, str]]:
    """The headings of a stretch of whole lines outside code, with only \\n breaks."""
    if "#" not in text:
        return
    for line in _heading_lines(text):
        found = atx_heading(line)
        if found is not None:
            yield found[0], found[1].strip()


def _line_segments(markdown: str) -> Sequence[tuple[str, bool]] | None:
    """``iter_lines``' reading of the text as ``segments``' stretches of whole lines, or
    None where it has other line breaks than \\n (read line by line then). Without them,
    the two readings differ only in a closing fence led by other white space (a
    no-break space): ``str.strip`` reads it, so it is a candidate here."""
    if not _irregular(markdown):
        return segments(markdown)
    if any(brk in markdown for brk in _BREAKS):
        return None
    return _segments(markdown, _fence_lines(markdown, None))


def headings(markdown: str) -> list[tuple[int, str]]:
    """ATX headings outside code, as (level, text), in document order."""
    stretches = _line_segments(markdown)
    if stretches is not None:
        return [
            heading
            for text, in_code in stretches
            if not in_code
            for heading in _prose_headings(text)
        ]
    found = []
    for line, in_code in iter_lines(markdown):
        match = None if in_code else _ATX.match(line.rstrip("\r\n"))
        if match:
            found.append((len(match["hashes"]), (match["text"] or "").strip()))
    return found


def relevel(markdown: str, shift: int) -> str:
    """Move every heading outside code ``shift`` levels deeper, capped at h6."""
    stretches = _line_segments(markdown)
    if stretches is not None:
        return "".join(
            text if in_code else _relevel_prose(text, shift) for text, in_code in stretches
        )
    out = []
    for line, in_code in iter_lines(markdown):
        match = None if in_code else _ATX.match(line.rstrip("\r\n"))
        if match:
            level = min(6, len(match["hashes"]) + shift)
            ending = line[len(line.rstrip("\r\n")) :]
            line = f"{match['indent']}{'#' * level} {(match['text'] or '').strip()}{ending}"
        out.append(line)
    return "".join(out)


def _relevel_prose(text: str, shift: int) -> str:
    """``relevel`` of a stretch of whole lines outside code, with only \\n line breaks."""
    if "#" not in text:
        return text

    def deeper(line: str) -> str:
        found = atx_heading(line)
        if found is None:
            return line
        indent = line[: len(line) - len(line.lstrip(" "))]
        return f"{indent}{'#' * min(6, found[0] + shift)} {found[1].strip()}"

    first = _FIRST_HEADING_LINE.match(text)
    head = deeper(first.group()) + text[first.end() :] if first is not None else text
    return _LATER_HEADING_LINE.sub(lambda m: "\n" + deeper(m[1]), head)


# Link text may hold one level of brackets: Node's "[[src]](url)" is the text "[src]".
_LINK_TEXT = r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"
_IMAGE = re.compile(r"!" + _LINK_TEXT + r"\([^)]*\)")
_INLINE_LINK = re.compile(_LINK_TEXT + r"\([^)]*\)")
_TAG = re.compile(r"(?<!\\)<[^>\n]+>")  # "\<name>" is text, not a tag
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
# Underscore emphasis: a run that opens (not after a word) and closes (not before one).
# A lone underscore ("Q_()", "on_event") is a literal character, as CommonMark reads it.
_EMPHASIS_UNDERSCORE = re.compile(
    r"(?<![\w\uE000-\uF8FF])(_{1,3})(?=[^\s_])(.*?[^\s_])\1(?![\w\uE000-\uF8FF])"
)


def link_text(text: str) -> str:
    """Heading text as it may sit inside a link: images dropped, links reduced to text."""
    # Each pattern only where the text has what it needs ("![", "]("): headings are many.
    if "![" in text:
        text = _IMAGE.sub("", text)
    return _INLINE_LINK.sub(_first_group, text) if "](" in text else text


def _first_group(match: re.Match[str]) -> str:
    return match[1]


# Each heading is read several times (its slug in docs.md and in its file, its chunk's
# path and anchor) and API pages repeat the same ones ("fn borrow(&self) -> &T" on
# hundreds of pages): the link-laden ones cost ~40 µs each. Bounded: about 2 MB.
@functools.lru_cache(maxsize=8192)
def plain_text(text: str) -> str:
    """What a renderer shows for inline markdown: the text GitHub slugs headings from."""
    if _MARKUP.search(text) is None:
        return text.strip()  # most headings: nothing to read but the words
    out = []
    for piece, code in _split_code_spans(_links_to_text(text)):
        out.append(piece if code else _plain_prose(piece))
    return "".join(out).strip()


_MARKUP = re.compile(r"[\[\]`*_<>\\&!]")
_PARKED = re.compile("\uf8f0(\\d+)\uf8f1")


def _links_to_text(text: str) -> str:
    """Links reduced to their text before code spans are read: a link's text may hold a
    code span ("[Inspecting `Values`](#x)"), and a code span may look like a link."""
    if "](" not in text:
        return text
    spans: list[str] = []

    def park(match: re.Match[str]) -> str:
        spans.append(match.group())
        return f"\uf8f0{len(spans) - 1}\uf8f1"

    if "`" not in text:
        return link_text(text)
    reduced = link_text(_CODE_SPAN.sub(park, text))
    return _PARKED.sub(lambda m: spans[int(m[1])], reduced)


def _split_code_spans(text: str) -> Iterator[tuple[str, bool]]:
    if "`" not in text:
        yield text, False
        return
    start = 0
    for span in _CODE_SPAN.finditer(text):
        yield text[start : span.start()], False
        inner = span.group()[len(span["ticks"]) : -len(span["ticks"])]
        yield (inner[1:-1] if inner.startswith(" ") and inner.endswith(" ") else inner), True
        start = span.end()
    yield text[start:], False


def _plain_prose(text: str) -> str:
    text = link_text(text)
    if "<" in text:
        text = _TAG.sub("", text)
    # Escaped characters are literal: park them in the private-use area so the
    # emphasis stripping below cannot mistake ``\_`` for a delimiter.
    if "\\" in text:
        text = _ESCAPED.sub(lambda m: chr(0xE000 + ord(m[1])), text)
    text = text.replace("*", "")
    if "_" in text:
        text = _EMPHASIS_UNDERSCORE.sub(r"\2", text)
    if not text.isascii():
        text = _PARKED_ESCAPE.sub(lambda m: chr(ord(m.group()) - 0xE000), text)
    return html.unescape(text)


_PARKED_ESCAPE = re.compile("[\ue000-\ue07f]")


_ASCII_DROPPED = re.compile(r"[^a-z0-9_\- ]")


@functools.lru_cache(maxsize=65536)  # fragments and headings recur across pages
def github_slug(text: str) -> str:
    """GitHub's anchor for a heading's plain text (github-slugger, before de-duplication):
    lower case, punctuation and symbols dropped, each space a hyphen."""
    if text.isascii():  # ASCII letters and digits are the only ASCII word characters
        return _ASCII_DROPPED.sub("", text.lower()).replace(" ", "-")
    kept = (ch for ch in text.lower() if ch in "-_ " or _is_word_char(ch))
    return "".join(kept).replace(" ", "-")


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


class Slugger:
    """Unique GitHub-style anchors for one document: repeats get -1, -2... like GitHub."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def slug(self, heading_text: str) -> str:
        return self.unique(github_slug(plain_text(heading_text)))

    def unique(self, base: str) -> str:
        """The document's anchor for a heading whose GitHub slug is ``base``."""
        slug = base
        while slug in self._seen:
            self._seen[base] += 1
            slug = f"{base}-{self._seen[base]}"
        self._seen[slug] = 0
        return slug
