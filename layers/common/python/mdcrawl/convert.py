"""One HTML document in, one ``ConvertedPage`` out: pure, deterministic, no I/O.

decode -> parse once (lxml) -> extract the content region (generator-aware cascade)
-> render markdown from the pruned tree -> title, description, word count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lxml.html import HtmlElement

from . import template as tpl
from .depth import parse_bounded
from .document import Document, meta_contents, parse_document
from .extract import decode_html, detect_generator, extract_page
from .markdown import render_markdown
from .models import ConvertedPage
from .template import SiteTemplate

# " — Site", " | Site", " - Site"... : the suffix most generators append to <title>.
_TITLE_SUFFIX = re.compile(r"^(.+?)\s+[—–|·:-]\s+[^—–|·]+$")
_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)")
_DESCRIPTION_MAX = 200


def convert_html(
    body: bytes | str,
    url: str,
    encoding: str | None = None,
    template: SiteTemplate | None = None,
    generator_rules: bool = True,
) -> ConvertedPage:
    """Convert a page to markdown that starts with its own ``# Title``; ``template`` is
    the site's learned template (see ``template.py``), used where no generator rule is."""
    # depth.py (in parse_document): 100k nested divs must not overflow the renderer
    return convert_document(parse_document(body, encoding), url, template, generator_rules)


def convert_document(
    page: Document,
    url: str,
    template: SiteTemplate | None = None,
    generator_rules: bool = True,
) -> ConvertedPage:
    """``convert_html`` of a page already parsed; its tree is pruned in the process, so
    whatever else reads the tree (its links) reads it first."""
    html, root = page.text, page.root
    # Every walk of an lxml.html tree makes a Python object for each element it meets
    # (its class chosen by a Python callback) and drops it again; the dozen walks below
    # would each pay that anew. Held here, each element's object is made once (and the
    # page's scan walks this list, faster than lxml's iterator).
    held = list(root.iter())
    extraction = extract_page(root, html, url, template, generator_rules, held)
    region = extraction.region
    title = page_title(root, region, url)
    description = page_description(root, region, extraction.metas)
    rendered = render_markdown(region, extraction.classes)
    markdown = with_heading(rendered.text, title)
    if extraction.redirect:
        # Redirect stubs all read "Redirecting..."; their target is what tells them apart.
        markdown += f"\n\nRedirects to <{extraction.redirect}>."
    words = rendered.prose_words + (0 if markdown is rendered.text else len(title.split()))
    del held
    return ConvertedPage(
        title=title,
        markdown=markdown + "\n",
        words=words,
        nav=extraction.nav,
        description=description,
        quality=extraction.quality,
        extractor=extraction.extractor,
        anchors=rendered.anchors,
    )


def depends_on_template(
    body: bytes | str, encoding: str | None = None, generator_rules: bool = True
) -> bool:
    """Whether the site's template can change this page's markdown: no generator rule
    recognises it (or rules are off, then without parsing it)."""
    if not generator_rules:
        return True
    return detect_generator(parse_bounded(decode_html(body, encoding))) is None


def learn_template(
    pages: Iterable[tuple[bytes | str, str | None]], generator_rules: bool = True
) -> SiteTemplate | None:
    """The site's template from some of its pages (body, encoding), in discovery order.
    With generator rules on, a site whose pages nearly all have a rule needs none."""
    roots = [parse_bounded(decode_html(body, encoding)) for body, encoding in pages]
    if generator_rules and roots:
        ruled = sum(detect_generator(root) is not None for root in roots)
        if ruled >= tpl.RULED_SHARE * len(roots):
            return None
    return tpl.learn_from(roots)


def page_title(root: HtmlElement, region: HtmlElement, url: str) -> str:
    """The region's h1; else the page's own name as the region opens with it (its first
    heading, or a caption line) where <title> holds it too ("1 Build" in "Build (SBCL
    Internals)": <title> adds the site's name); else <title> without its site suffix,
    else the URL's last part. Several h1s are the page's sections (Haddock), not its
    name: then the first h1 is only a fallback."""
    h1s = [t for t in (_one_line(h.text_content()) for h in region.iter("h1")) if t]
    if len(h1s) == 1:
        return h1s[0]
    title = _one_line(root.findtext(".//title") or "")
    named = _opening_name(region, title)
    if named:
        return named
    match = _TITLE_SUFFIX.match(title)
    if match and match.group(1).count("(") <= match.group(1).count(")"):
        return match.group(1)  # not a cut inside brackets: "Name (Index - J)"
    return title or (h1s[0] if h1s else "") or url.rstrip("/").rsplit("/", 1)[-1] or url


_SECTION_NUMBER = re.compile(r"^(?:\d+|[A-Z])(?:\.\d+)*\.?\s+(?=\w)")
_OPENING_MAX = 80  # characters: a longer line is a sentence, not a name


def _opening_name(region: HtmlElement, title: str) -> str:
    """The region's first heading, or its first line of text when that is a short
    paragraph, if it is a whole part of the <title> (its words in a row, between the
    title's punctuation or ends: "Build" in "Build (SBCL Internals)", "Index - J" in
    "pkg: … (Index - J)", never "Macros" in "LMDB: Version Macros")."""
    if not title:
        return ""
    words, bounded = _title_parts(title)
    first_block = _first_text_block(region)
    opening = first_block if first_block is not None and first_block.tag == "p" else None
    for candidate in (next(region.iter(*_HEADINGS), None), opening):
        if candidate is None:
            continue
        text = _one_line(candidate.text_content())
        name = _TITLE_WORD.findall(_SECTION_NUMBER.sub("", text).casefold())
        if text and len(text) <= _OPENING_MAX and name and _holds(words, bounded, name):
            return text
    return ""


def _first_text_block(region: HtmlElement) -> HtmlElement | None:
    """The first block of text the region shows (a leaf: no text block inside it)."""
    for element in region.iter(*_TEXT_BLOCKS):
        if element is region or not _one_line(element.text_content()):
            continue
        inner = (e for e in element.iter(*_TEXT_BLOCKS) if e is not element)
        if next((e for e in inner if _one_line(e.text_content())), None) is None:
            return element
    return None


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_TEXT_BLOCKS = ("p", "div", "li", "td", "th", "dt", "dd", "pre", "table", *_HEADINGS)
_TITLE_WORD = re.compile(r"\w+")


def _title_parts(title: str) -> tuple[list[str], list[bool]]:
    """The title's words, and for each gap (before the first word, between two, after
    the last) whether it parts the title: an end, or punctuation ("Build (SBCL": yes;
    "Version Macros": no)."""
    matches = list(_TITLE_WORD.finditer(title))
    edges = [0, *(m.end() for m in matches)]
    starts = [*(m.start() for m in matches), len(title)]
    gaps = [title[a:b] for a, b in zip(edges, starts, strict=True)]
    bounded = [i in (0, len(matches)) or bool(gap.strip()) for i, gap in enumerate(gaps)]
    return [m.group(0).casefold() for m in matches], bounded


def _holds(words: list[str], bounded: list[bool], run: list[str]) -> bool:
    size = len(run)
    return any(
        words[i : i + size] == run and bounded[i] and bounded[i + size]
        for i in range(len(words) - size + 1)
    )


_DESCRIPTION_METAS = (("name", "description"), ("property", "og:description"))


def page_description(
    root: HtmlElement, region: HtmlElement, metas: list[HtmlElement] | None = None
) -> str:
    """meta description, else the first sentence of the first paragraph; one line.
    ``metas``: the tree's <meta> elements, if known (``Extraction.metas``)."""
    contents = meta_contents(root, _DESCRIPTION_METAS, metas)
    text = next((_one_line(m) for m in contents if m.strip()), "")
    if not text:
        for paragraph in region.iter("p"):
            text = _one_line(paragraph.text_content())
            if text:
                match = _SENTENCE.match(text)
                text = match.group(1) if match else text
                break
    return _clip(text, _DESCRIPTION_MAX)


def with_heading(markdown: str, title: str) -> str:
    """Make the page start with an h1: keep the region's own, else add one from the title."""
    if markdown.startswith("# "):
        first = markdown.partition("\n")[0]
        if _plain(first[2:]) != _plain(title) and _h1_count(markdown) > 1:
            return f"# {title}\n\n{markdown}"  # the h1s are sections: the title tops them
        return markdown
    # mdBook and others open a page with an h2: that heading is the page's title.
    first, _, rest = markdown.partition("\n")
    if re.fullmatch(r"#{2,6} (.+)", first) and _plain(first.lstrip("#")) == _plain(title):
        return f"# {_one_line(first.lstrip('#'))}\n{rest}"
    if _plain(first) == _plain(title) and not rest[:1].strip():
        return f"# {title}\n{rest}"  # a caption line naming the page ("Index - J")
    # The page's own h1 after a kicker ("Package x", a breadcrumb line): lift it to the top.
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if line == f"# {title}":
            # Only the seam left by the lifted line is tidied: code below keeps its blank lines.
            before = "\n".join(lines[:i]).strip("\n")
            after = "\n".join(lines[i + 1 :]).strip("\n")
            rest = "\n\n".join(part for part in (before, after) if part)
            return f"{line}\n\n{rest}" if rest else line
        if line.startswith("```") or line.startswith("#") and re.search(r"\w", line):
            break  # a heading of no words ("## —", a rule drawn as one) is still a kicker
    heading = f"# {title}"
    return f"{heading}\n\n{markdown}" if markdown else heading


def _h1_count(markdown: str) -> int:
    """h1 lines outside code blocks."""
    count, fenced = 0, False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            count += 1
    return count


def _plain(text: str) -> str:
    """Heading text without inline markup (DocBook titles hold <code>: `name`)."""
    return _one_line(re.sub(r"[`*]", "", text))


def _one_line(text: str) -> str:
    return " ".join(text.replace("¶", " ").split())


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"
