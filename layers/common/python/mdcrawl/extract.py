"""Find a page's content region, strip its chrome, and read the site's navigation.

The cascade (see ``selectors.py`` for the data): a recognised documentation generator's
own content selector; else the page's structure (``main``, ``[role=main]``, ``article``);
else readability-lxml. The page is parsed once with lxml; everything after works on
that tree, and the region returned is pruned in place with links made absolute.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urldefrag, urljoin

import lxml.etree
import lxml.html
import lxml.html.defs
from lxml.cssselect import CSSSelector
from lxml.html import HtmlElement

from . import document, linkjoin
from . import selectors as sel
from .selectors import GeneratorRule
from .template import SiteTemplate, content_region, density_region

_NAV_SCHEMES = ("http://", "https://")


@dataclass(frozen=True)
class Extraction:
    region: HtmlElement  # pruned content, links absolute
    extractor: str  # the rule that picked it: "sphinx", "structural:main", "readability"
    quality: float
    nav: tuple[str, ...]
    base_url: str
    redirect: str | None = None  # a meta-refresh stub's target
    # Class names (``known_classes``) holding every class left in the region: the
    # renderer's selectors skip a class found nowhere in it without a walk of its own.
    classes: str | None = None
    # The page's <meta> elements left after pruning, in document order, if known.
    metas: list[HtmlElement] | None = None


@lru_cache(maxsize=512)
def compiled(css: str) -> lxml.etree.XPath:
    """Selectors are data; compiling one to XPath costs more than running it, so once."""
    return lxml.etree.XPath(descendant_steps(CSSSelector(css).path))


# cssselect writes the descendant combinator ("A B") as "A/descendant-or-self::*/B": a
# node set of every element below each A, then each one's children named B, sorted and
# deduplicated again. "A/descendant::B" is the same set in one step (a third less time
# on a big page), while B's predicates do not ask where it stands in that set
# (position(), last()): cssselect counts siblings instead, and the guard keeps it so.
_DESCENDANT_OR_SELF_CHILD = "/descendant-or-self::*/"


def descendant_steps(path: str) -> str:
    """cssselect's XPath with each "/descendant-or-self::*/B" as "/descendant::B", and
    each step of any element with a given id or class (``*[@id = 'x']``) as a step to
    the attribute, tested, and back to its element (``*/@id[. = 'x']/..``): the same
    elements, in document order, but libxml2 tests a predicate on an element several
    times slower than on an attribute (``#yui-main div.yui-b``: 1.75 -> 0.72 ms)."""
    if "position()" in path or "last()" in path or _NUMBERED.search(path):
        return path
    path = path.replace(_DESCENDANT_OR_SELF_CHILD, "/descendant::")
    path = _ANY_WITH_ID.sub(r"*/@id[. = '\1']/..", path)
    # contains(., 'x'): a cheap test first (a class attribute holding the name whole
    # holds it), the whole-name test only where it passes
    return _ANY_WITH_CLASS.sub(
        r"*/@class[contains(., '\1')][contains(concat(' ', normalize-space(.), ' '), ' \1 ')]/..",
        path,
    )


_NUMBERED = re.compile(r"\[\s*\d")  # a positional predicate ([1]): none is rewritten
_ANY_WITH_ID = re.compile(r"\*\[@id = '([^']*)'\]")
_ANY_WITH_CLASS = re.compile(
    r"\*\[@class and contains\(concat\(' ', normalize-space\(@class\), ' '\), ' ([^' ]+) '\)\]"
)


def select(root: HtmlElement, css: str) -> list[HtmlElement]:
    return compiled(css)(root)


# Every class attribute under an element, in one walk in C.
_CLASS_VALUES = lxml.etree.XPath("descendant-or-self::*/@class", smart_strings=False)
_ATTRIBUTE_TEST = re.compile(r"\[[^\]]*\]")
_CLASS_NAME = re.compile(r"\.([\w-]+)")


def class_names(root: HtmlElement) -> str:
    """The distinct class names under ``root`` (``known_classes``): a selector that
    names a class found nowhere in it cannot match there (``select_known``)."""
    return known_classes(_CLASS_VALUES(root))


def known_classes(attributes: Iterable[str]) -> str:
    """Class attributes as ``select_known`` reads them: each distinct class name once,
    each with a space on either side, so that a name is found whole ("body" is not in
    "bodywrapper"). Split at any whitespace: XPath splits at less, so every class a
    selector's query can match is here."""
    names = {name for attribute in set(attributes) for name in attribute.split()}
    return f" {' '.join(names)} "


@lru_cache(maxsize=512)
def _required_classes(css: str) -> tuple[str, ...]:
    """The class names every match of ``css`` needs somewhere under the root it runs on
    (each compound of a descendant chain: all of them); none where a pseudo-class, a
    group or an escape could make that untrue."""
    plain = _ATTRIBUTE_TEST.sub("", css)
    if any(char in plain for char in ":,()\\"):
        return ()
    return tuple(_CLASS_NAME.findall(plain))


def select_known(root: HtmlElement, css: str, classes: str | None) -> list[HtmlElement]:
    """``select(root, css)``, skipped when ``classes`` (``class_names`` of ``root`` or
    of an element holding it) lacks a class the selector needs: most of the selectors
    kept as data name widgets a page does not have, and each costs a walk of the tree.
    ``classes`` None: not known, always run."""
    if classes is not None and any(
        f" {name} " not in classes for name in _required_classes(css)
    ):
        return []
    return select(root, css)


_SIMPLE = re.compile(r"^([a-z][a-z0-9]*)?(?:#([\w-]+))?((?:\.[\w-]+)*)(?:\[([\w-]+)=([\w-]+)\])?$")


@dataclass(frozen=True)
class _Compound:
    css: str
    tag: str | None
    id: str | None
    classes: frozenset[str]
    attr: tuple[str, str] | None

    def matches(self, el: HtmlElement, classes: set[str]) -> bool:
        return (
            (self.tag is None or el.tag == self.tag)
            and (self.id is None or el.get("id") == self.id)
            and self.classes <= classes
            and (self.attr is None or el.get(self.attr[0]) == self.attr[1])
        )


class SelectorSet:
    """Many CSS selectors matched in one walk of the tree.

    Running forty selectors as forty XPath queries walks the region forty times; most
    drop rules are simple compounds (``tag#id.class[attr=value]``), so those are
    indexed by tag, id and class and checked in a single pass. Anything fancier
    (combinators, substring attributes) still goes through lxml.cssselect.
    """

    def __init__(self, selectors: tuple[str, ...]) -> None:
        self.index: dict[str, list[_Compound]] = {}
        self.complex: list[str] = []
        for css in selectors:
            match = _SIMPLE.match(css.strip())
            if not match or not any(match.groups()):
                self.complex.append(css)
                continue
            tag, id_, cls, attr, value = match.groups()
            classes = frozenset(c for c in cls.split(".") if c)
            compound = _Compound(css, tag, id_, classes, (attr, value) if attr else None)
            key = (
                f".{min(classes)}" if classes else f"#{id_}" if id_ else tag if tag else f"[{attr}]"
            )
            self.index.setdefault(key, []).append(compound)

        # The index split by kind, so that an element with nothing indexed (most of
        # them) is rejected with a few dict lookups and no string building.
        self.by_tag = {k: v for k, v in self.index.items() if k[0] not in ".#["}
        self.by_class = {k[1:]: v for k, v in self.index.items() if k[0] == "."}
        self.by_id = {k[1:]: v for k, v in self.index.items() if k[0] == "#"}
        self.by_attr = [(k[1:-1], v) for k, v in self.index.items() if k[0] == "["]
        self._classes: dict[str, tuple[list[_Compound], set[str]]] = {}

        self.attr_names = tuple(name for name, _ in self.by_attr)

    def find(self, root: HtmlElement) -> list[HtmlElement]:
        """Elements matching any selector (document order for the simple ones)."""
        return self.found(self.scan(root)[0], root)

    def found(self, hits: list[tuple[HtmlElement, list[_Compound]]], root: HtmlElement) -> list:
        """``find`` from a ``scan`` of ``root``."""
        elements = [el for el, _ in hits]
        for css in self.complex:
            elements.extend(select(root, css))
        return elements

    def present(self, root: HtmlElement) -> set[str]:
        """Which selectors match somewhere under ``root``."""
        hit = {c.css for _, compounds in self.scan(root)[0] for c in compounds}
        return hit | {css for css in self.complex if select(root, css)}

    def scan(
        self, root: HtmlElement, nodes: list[HtmlElement] | None = None
    ) -> tuple[list[tuple[HtmlElement, list[_Compound]]], set]:
        """The simple selectors' hits under ``root`` (each element with what it matches,
        in document order), and its distinct class attributes (``class_names``), in one
        walk. Most elements are rejected on their class and tag alone, ids and attributes
        read only when those say nothing.
        ``nodes``: every node under ``root`` (and it) in document order, if the caller
        holds them (``list(root.iter())``: comments and PIs have no attributes, so they
        match nothing): a list is walked faster than lxml's iterator."""
        # The tags indexed are told by name (a dict lookup), not by a walk of the
        # tree for them beforehand: lxml's iter(tag) costs more than the whole loop.
        entries, class_entry, hits = self._classes, self._class_entry, self._hits
        by_tag, by_id, attr_names = self.by_tag, self.by_id, self.attr_names
        classes: set[str] = set()
        found = []
        for el in root.iter(_ELEMENTS) if nodes is None else nodes:
            # One call for the names (an element without attributes, the most common,
            # ends here) instead of a get() for each attribute asked about: a fifth less.
            names = el.keys()
            if not names:
                maybe = el.tag in by_tag
            else:
                cls = el.get("class")
                if cls:
                    classes.add(cls)
                    maybe = bool((entries.get(cls) or class_entry(cls))[0]) or el.tag in by_tag
                else:
                    maybe = el.tag in by_tag
                if not maybe and by_id and "id" in names:
                    maybe = el.get("id") in by_id
                if not maybe:
                    for name in attr_names:
                        if name in names:
                            maybe = True
                            break
            if maybe:
                matched = hits(el)
                if matched:
                    found.append((el, matched))
        return found, classes

    def _hits(self, el: HtmlElement) -> list[_Compound]:
        get = el.get
        cls = get("class")
        if cls:
            # Pages repeat a few class strings thousands of times: each is split once.
            entry = self._classes.get(cls)
            if entry is None:
                entry = self._class_entry(cls)
            candidates, classes = entry
            by_tag = self.by_tag.get(el.tag)
            if by_tag:
                candidates = by_tag + candidates
        else:
            candidates, classes = self.by_tag.get(el.tag, _NONE), _NO_CLASSES
        id_ = get("id")
        if id_ and id_ in self.by_id:
            candidates = candidates + self.by_id[id_]
        for name, compounds in self.by_attr:
            if get(name) is not None:
                candidates = candidates + compounds
        if not candidates:
            return _NONE
        return [c for c in candidates if c.matches(el, classes)]

    def _class_entry(self, cls: str) -> tuple[list[_Compound], set[str]]:
        """The compounds a class attribute may select, and its class names."""
        by_class = self.by_class
        candidates: list[_Compound] = []
        for name in cls.split():
            if name in by_class:
                candidates = candidates + by_class[name]
        entry = (candidates, set(cls.split()))
        if len(self._classes) < _CLASS_CACHE_SIZE:
            self._classes[cls] = entry
        return entry


_NONE: list[_Compound] = []
_NO_CLASSES: set[str] = set()
_CLASS_CACHE_SIZE = 4096  # distinct class attributes remembered per selector set
_ELEMENTS = lxml.etree.Element  # iter() filter: elements only, no comments or PIs


@lru_cache(maxsize=64)
def selector_set(selectors: tuple[str, ...]) -> SelectorSet:
    return SelectorSet(selectors)


def decode_html(body: bytes | str, encoding: str | None = None) -> str:
    """Bytes to text (``document.decode``: a wrong UTF-8 label is not trusted)."""
    return document.decode(body, encoding)


def parse_html(text: str) -> HtmlElement:
    """Parse any HTML (broken, empty, XML-declared) into an lxml document."""
    return document.parse_html(text)


def page_base_url(root: HtmlElement, url: str) -> str:
    """The URL relative links resolve against: ``<base href>`` if any, else the page."""
    href = document.base_href(root)
    return urljoin(url, href.strip()) if href is not None else url


def redirect_target(
    root: HtmlElement, base: str, metas: list[HtmlElement] | None = None
) -> str | None:
    """Where a ``<meta http-equiv=refresh>`` stub sends the reader, if it is one.
    ``metas``: the tree's <meta> elements, if known (``page_metas``)."""
    target = document.refresh_target(root, metas)
    return urljoin(base, target.strip("'\" ")) if target else None


_GENERATOR_METAS = (("name", "generator"), ("name", "Generator"))


def detect_generator(root: HtmlElement) -> GeneratorRule | None:
    return _detect(root)[0]


Scan = tuple[list[tuple[HtmlElement, list[_Compound]]], set[str]]  # SelectorSet.scan's


def _detect(
    root: HtmlElement, nodes: list[HtmlElement] | None = None
) -> tuple[GeneratorRule | None, Scan]:
    """The page's generator rule, and the page's scan for every marker and every drop
    rule: the walk that finds the markers finds the chrome ``prune`` drops as well.
    ``nodes``: ``list(root.iter())``, if the caller holds it (``SelectorSet.scan``)."""
    page = _page_selectors()
    scan = page.scan(root, nodes)
    metas = page_metas(root, scan)
    generator = " ".join(document.meta_contents(root, _GENERATOR_METAS, metas))
    generator = generator.lower()
    present = {c.css for _, compounds in scan[0] for c in compounds}
    classes = known_classes(scan[1])
    present |= {css for css in page.complex if select_known(root, css, classes)}
    for rule in sel.GENERATORS:
        if rule.generator and rule.generator in generator:
            return rule, scan
        if any(marker in present for marker in rule.markers):
            return rule, scan
    return None, scan


def page_metas(root: HtmlElement, scan: Scan | None) -> list[HtmlElement] | None:
    """The page's <meta> elements in document order, read off its scan when a drop rule
    names the tag (every <meta> is then among the hits): lxml's walk for them visits
    every node of a big page, three times a page. None: not known from ``scan``."""
    if scan is None or "meta" not in _page_selectors().by_tag:
        return None
    return [element for element, _ in scan[0] if element.tag == "meta"]


def still_in(root: HtmlElement, elements: list[HtmlElement] | None) -> list[HtmlElement] | None:
    """``elements`` that are still in ``root``'s tree (pruning drops some), in order."""
    if elements is None:
        return None
    kept = []
    for element in elements:
        top = element
        while (parent := top.getparent()) is not None:
            top = parent
        if top is root:
            kept.append(element)
    return kept


@lru_cache(maxsize=1)
def _page_selectors() -> SelectorSet:
    """Every generator's markers and every drop rule, as one set (``_detect``)."""
    markers = tuple(m for rule in sel.GENERATORS for m in rule.markers)
    drops = tuple(d for rule in sel.GENERATORS for d in rule.drop)
    return selector_set(tuple(dict.fromkeys(markers + sel.COMMON_DROP + drops)))


def _first_match(
    root: HtmlElement, selectors: tuple[str, ...], classes: str | None = None
) -> tuple[HtmlElement, str] | None:
    for css in selectors:
        for element in select_known(root, css, classes):
            if has_text(element):
                return element, css
    return None


def find_region(
    root: HtmlElement,
    html: str,
    rule: GeneratorRule | None,
    template: SiteTemplate | None = None,
    classes: str | None = None,
) -> tuple[HtmlElement, str, float]:
    """The cascade: generator rule, then the site's learned template, then structural
    selectors, then readability. ``classes``: the page's ``class_names``, if known (a
    selector naming a class the page lacks is not run)."""
    if rule is not None:
        found = _first_match(root, rule.content, classes)
        if found:
            return found[0], rule.name, sel.QUALITY_GENERATOR
    body = root.find("body")
    if template is not None and body is not None:
        region = content_region(body, template)
        if region is not None:
            return region, "template", sel.QUALITY_TEMPLATE
    found = _first_match(root, sel.STRUCTURAL, classes)
    if found:
        return found[0], f"structural:{found[1]}", sel.QUALITY_STRUCTURAL
    readable = _readability_region(root, html)
    dense = density_region(body) if body is not None else None
    # Readability keeps one docstring of an API page and drops its members; where it
    # kept less than half of what text and link density find, density wins.
    if dense is not None and _text_length(readable) < DENSITY_WINS * _text_length(dense):
        return dense, "density", sel.QUALITY_READABILITY
    return readable, "readability", sel.QUALITY_READABILITY


DENSITY_WINS = 0.5


def _text_length(element: HtmlElement) -> int:
    return len("".join(element.itertext()).split())


def _readability_region(root: HtmlElement, html: str) -> HtmlElement:
    # Imported here: readability is the rare fallback and costs import time otherwise.
    from readability import Document
    from readability.readability import Unparseable

    try:
        summary = Document(html).summary(html_partial=True)
    except (Unparseable, ValueError):
        summary = ""
    if summary.strip():
        region = lxml.html.fragment_fromstring(summary, create_parent="div")
        # Readability can keep a shell and lose a short page's only text ("No Matches").
        if region.text_content().strip():
            return region
    body = root.find("body")
    return body if body is not None else root


def site_nav(
    root: HtmlElement, rule: GeneratorRule | None, base: str, classes: str | None = None
) -> tuple[str, ...]:
    """The site's navigation links in reading order: absolute, no fragment, no repeats.
    ``classes``: the page's ``class_names``, if known (a bar whose class it lacks is not
    looked for)."""
    # A recognised generator's own nav or nothing: its other link bars (Sphinx's
    # "related" bar: index, modules, next) would scramble the reading order.
    candidates = rule.nav if rule else sel.GENERIC_NAV
    here = urldefrag(base).url
    heads = _Heads(root)
    if rule is None and _first_link(
        root, sel.SEQUENCE_PREV + sel.SEQUENCE_NEXT, base, classes, heads
    ):
        # No rule says which bar is the site's navigation, but the page names the pages
        # before and after it (<link rel=next>): that chain is the site's own order, where
        # a guessed bar (Sphinx's "index | modules | next") would scramble it.
        return _sequence_nav(root, rule, base, here, classes, heads)
    for css in candidates:
        links = _unique_links(select_known(root, css, classes), base)
        # A sidebar that only lists this page's own sections is not site navigation.
        if links and links != (here,):
            return links
    return _sequence_nav(root, rule, base, here, classes, heads)


class _Heads:
    """The page's <head> elements, found by one walk of the tree when first asked for
    (up to six head selectors ask, and the walk visits every node of the page)."""

    def __init__(self, root: HtmlElement) -> None:
        self.root = root
        self.found: list[HtmlElement] | None = None

    def __call__(self) -> list[HtmlElement]:
        if self.found is None:
            self.found = list(self.root.iter("head"))
        return self.found


def _sequence_nav(
    root: HtmlElement,
    rule: GeneratorRule | None,
    base: str,
    here: str,
    classes: str | None,
    heads: _Heads | None = None,
) -> tuple[str, ...]:
    """No sidebar: the page's place in what the generator offers instead, as
    (previous page, this page, its table of contents..., next page). The crawl's
    reading order merges these local sequences around the start page's (the index's
    TOC), so each page lands after its predecessor and before its children."""
    children: tuple[str, ...] = ()
    for css in rule.toc if rule else ():
        found = select_known(root, css, classes)
        children = tuple(u for u in _unique_links(found, base) if u != here)
        if children:
            break
    before = _first_link(root, sel.SEQUENCE_PREV, base, classes, heads)
    after = _first_link(root, sel.SEQUENCE_NEXT, base, classes, heads)
    if not children and not before and not after:
        return ()
    links = [before, here, *children, after]
    return tuple(dict.fromkeys(u for u in links if u))


def _first_link(
    root: HtmlElement,
    selectors: tuple[str, ...],
    base: str,
    classes: str | None,
    heads: _Heads | None = None,
) -> str | None:
    for css in selectors:
        links = _unique_links(_select_head_aware(root, css, classes, heads), base)
        if links:
            return links[0]
    return None


def _select_head_aware(
    root: HtmlElement, css: str, classes: str | None, heads: _Heads | None = None
) -> list[HtmlElement]:
    """``select_known``; a selector of what ``<head>`` holds (``head link[rel=next]``)
    is run under each head only: run from the root, its XPath walks the whole body.
    ``heads``: the page's heads, found once for every such selector."""
    head, _, rest = css.partition(" ")
    if head != "head" or not rest or rest[0] in ">+~":
        return select_known(root, css, classes)
    elements = root.iter("head") if heads is None else heads()
    return [found for element in elements for found in select(element, rest)]


def _unique_links(anchors: list[HtmlElement], base: str) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    join = linkjoin.joiner(base).join_defragged  # urldefrag(urljoin(base, href)).url
    for anchor in anchors:
        href = (anchor.get("href") or "").strip()
        if not href:
            continue
        url = join(href)
        if url.startswith(_NAV_SCHEMES):
            seen.setdefault(url, None)
    return tuple(seen)


def prune(region: HtmlElement, rule: GeneratorRule | None, page: Scan | None = None) -> str:
    """Remove chrome from the region in place (tails kept: they belong to the parent).
    ``page``: ``_detect``'s scan of the page holding the region, when nothing changed
    the tree since (the region was only selected), saving the region its own walk.
    Returns class names (``known_classes``) holding every class the pruned region has:
    pruning adds none."""
    drops = selector_set(sel.COMMON_DROP + (rule.drop if rule else ()))
    # One walk finds the chrome and the region's classes (``class_names``; the page's
    # hold the region's: a class the region lacks only costs a query that finds nothing);
    # pruning only removes classes: the names found now hold all that remain below.
    hits, found_classes = drops.scan(region) if page is None else _within(page, region, drops)
    classes = known_classes(found_classes)
    # first: a tab's label may be a <button>, dropped below (a rewritten tree is walked again)
    if _linearise_tab_sets(region, classes):
        hits = drops.scan(region)[0]
    doomed = [el for el in drops.found(hits, region) if el is not region]
    for element in doomed:
        if element.getparent() is not None:
            element.drop_tree()
    _unwrap_line_number_tables(region, classes)
    if rule is not None:
        _unwrap_layout_lists(region, rule.unwrap_lists, classes)
        _split_at_heading_rows(region, rule.heading_rows, classes)
    _unwrap_sectioning_lists(region)
    _grids_to_tables(region, classes)
    _unwrap_nested_pre(region)
    _drop_code_annotations(region)
    _line_breaks_in_pre(region)
    _unwrap_heading_self_links(region)
    _drop_permalinks(region)
    _drop_repeated_affordances(region)
    _links_around_blocks(region)
    _drop_comments(region)
    # libxml2 does not know <wbr> is empty and may nest the following text inside it.
    for wbr in list(region.iter("wbr")):
        wbr.drop_tag()
    return classes


def _within(page: Scan, region: HtmlElement, drops: SelectorSet) -> Scan:
    """The page's scan cut to the hits under ``region`` (or it) and to ``drops``."""
    wanted = {c.css for compounds in drops.index.values() for c in compounds}
    inside: dict[HtmlElement, bool] = {region: True}  # holds each proxy: ids stay unique
    hits = []
    for element, compounds in page[0]:
        matched = [c for c in compounds if c.css in wanted]
        if matched and _is_inside(element, inside):
            hits.append((element, matched))
    return hits, page[1]


def _is_inside(element: HtmlElement, known: dict[HtmlElement, bool]) -> bool:
    """Whether an ancestor-or-self of ``element`` is the region ``known`` was seeded
    with; every element climbed is remembered, so each is climbed once."""
    chain = []
    node: HtmlElement | None = element
    verdict = False
    while node is not None:
        found = known.get(node)
        if found is not None:
            verdict = found
            break
        chain.append(node)
        node = node.getparent()
    for climbed in chain:
        known[climbed] = verdict
    return verdict


def _linearise_tab_sets(region: HtmlElement, classes: str) -> bool:
    """Each tab's label, as a bold line, then its panel; the tab widget itself goes.
    Whether any tab set was found."""
    changed = False
    for tabs in sel.TAB_SETS:
        containers = select_known(region, tabs.container, classes)
        sets = set(containers)

        def own(css: str, container: HtmlElement, sets: set = sets) -> list[HtmlElement]:
            """The set's labels or panels, not those of a set nested in one of its panels."""
            return [
                el
                for el in select(container, css)
                if next((a for a in el.iterancestors() if a in sets), None) is container
            ]

        for container in containers:
            labels = own(tabs.label, container)
            panels = next(
                (p for css in tabs.panels if len(p := own(css, container)) == len(labels)), []
            )
            if not labels or not panels:
                continue
            blocks: list[HtmlElement] = []
            for label, panel in zip(labels, panels, strict=True):
                name = " ".join(label.text_content().split())
                if name:
                    title = lxml.html.Element("p")
                    title.append(_text_element("strong", name))
                    blocks.append(title)
                panel.tail = None
                panel.attrib.pop("hidden", None)
                blocks.append(panel)
            for child in list(container):
                container.remove(child)
            container.text = None
            container.tag = "div"
            container.extend(blocks)
            changed = True
    return changed


_BRACKETED_LABEL = re.compile(r"\[\w[\w -]*\]")


def _drop_code_annotations(region: HtmlElement) -> None:
    """A link labelled in brackets inside a code block ("[docs]" before each ``def`` of
    a highlighted source page) is the viewer's annotation, not code: no identifier a
    listing links is written with its brackets."""
    for pre in region.iter("pre"):
        for anchor in list(pre.iter("a")):
            if anchor.get("href") and _BRACKETED_LABEL.fullmatch(text_of(anchor).strip()):
                anchor.drop_tree()


def _line_breaks_in_pre(region: HtmlElement) -> None:
    """A ``<br>`` in a ``<pre>`` is a line break (Docusaurus ends each line with one)."""
    for pre in region.iter("pre"):
        for br in list(pre.iter("br")):
            br.tail = "\n" + (br.tail or "")
            br.drop_tag()


def _unwrap_line_number_tables(region: HtmlElement, classes: str) -> None:
    """A listing laid out as a table, line numbers in one column and the code in the next
    (Pygments' ``linenos=table``, gtk-doc's listings and their kind): only the code stays."""
    for table in select_known(region, "table.highlighttable", classes):
        cells = select(table, "td.code")
        if cells:
            _replace_with_cells(table, cells[:1])
    for table in list(region.iter("table")):
        code = _numbered_code_cells(table)
        if code:
            _replace_with_cells(table, code)


def _replace_with_cells(table: HtmlElement, cells: list[HtmlElement]) -> None:
    parent = table.getparent()
    if parent is None:
        return
    wrapper = lxml.html.Element("div")
    for cell in cells:
        if cell.text and cell.text.strip():
            wrapper.append(_text_element("p", cell.text))
        wrapper.extend(list(cell))
    wrapper.tail = table.tail
    parent.replace(table, wrapper)


_LINE_NUMBERS = re.compile(r"\s*\d+(?:\s+\d+)*\s*")


def _numbered_code_cells(table: HtmlElement) -> list[HtmlElement]:
    """The code cells of a line-numbered listing: every row a cell of ascending line
    numbers beside a cell holding a <pre>; [] for any other table."""
    rows = table.xpath("./tr | ./thead/tr | ./tbody/tr | ./tfoot/tr")
    numbers: list[str] = []
    code = []
    for row in rows:
        cells = row.xpath("./td | ./th")
        if len(cells) != 2 or cells[1].find(".//pre") is None:
            return []
        text = cells[0].text_content()
        if not _LINE_NUMBERS.fullmatch(text):
            return []
        numbers += text.split()
        code.append(cells[1])
    first = int(numbers[0]) if numbers else 0
    ascending = [int(n) for n in numbers] == list(range(first, first + len(numbers)))
    return code if code and ascending else []


def _unwrap_layout_lists(region: HtmlElement, selectors: tuple[str, ...], classes: str) -> None:
    for css in selectors:
        for listing in select_known(region, css, classes):
            for item in listing.findall("li"):
                item.tag = "div"
            listing.tag = "div"


_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def _unwrap_sectioning_lists(region: HtmlElement) -> None:
    """A bulleted list whose items hold headings lays out sections (Javadoc's member
    lists, with or without a rule): each item is a section, not a bullet ("- ## Methods"
    reads as no list a person wrote). Numbered lists keep their numbers."""
    bulleted = set(region.iter("ul"))
    found = []
    for heading in region.iter(*_HEADING_TAGS):
        item = next(heading.iterancestors("li"), None)
        listing = item.getparent() if item is not None else None
        if listing in bulleted:
            bulleted.discard(listing)
            found.append(listing)
    for listing in found:
        for item in listing.findall("li"):
            item.tag = "div"
        listing.tag = "div"


def _split_at_heading_rows(
    region: HtmlElement, selectors: tuple[str, ...], classes: str
) -> None:
    """A table whose rows include section headings (``tr.heading`` holding an h2) is
    several tables: split it there, the heading row's content standing between them."""
    if not selectors:
        return
    heading_rows = set()
    for css in selectors:  # a row, or an element inside the row (a cell's h3)
        for hit in select_known(region, css, classes):
            row = hit if hit.tag == "tr" else next(hit.iterancestors("tr"), None)
            if row is not None:
                heading_rows.add(row)
    tables = {row.getparent() for row in heading_rows}
    tables = {t.getparent() if t.tag in ("tbody", "thead", "tfoot") else t for t in tables}
    for table in tables:
        parent = table.getparent()
        if parent is None or table.tag != "table":
            continue
        rows = [r for r in table.iter("tr") if _own_table(r) is table]
        pieces: list[HtmlElement] = []
        current: HtmlElement | None = None
        for row in rows:
            if row in heading_rows:
                pieces.append(_heading_block(row))
                current = None
                continue
            if current is None:
                current = lxml.html.Element("table")
                for name, value in table.attrib.items():
                    current.set(name, value)
                pieces.append(current)
            row.tail = None
            current.append(row)
        if pieces:
            pieces[-1].tail = table.tail
        position = parent.index(table)
        parent.remove(table)
        for offset, piece in enumerate(pieces):
            parent.insert(position + offset, piece)


def _own_table(row: HtmlElement) -> HtmlElement | None:
    return next(row.iterancestors("table"), None)


def _heading_block(row: HtmlElement) -> HtmlElement:
    """A heading row's cells as one block; text with no heading of its own becomes one."""
    block = lxml.html.Element("div")
    for cell in row:
        if not isinstance(cell.tag, str):
            continue
        if cell.text:
            block.append(_text_element("span", cell.text))
        block.extend(list(cell))
    if next(block.iter("h1", "h2", "h3", "h4", "h5", "h6"), None) is None:
        text = " ".join(block.text_content().split())
        block = _text_element("h2", text)
    block.tail = None
    return block


def _text_element(tag: str, text: str) -> HtmlElement:
    element = lxml.html.Element(tag)
    element.text = text
    return element


def _grids_to_tables(region: HtmlElement, classes: str) -> None:
    """A CSS grid of cell divs (``div.three-column-summary``) is a table: say so."""
    for css, columns in sel.GRID_TABLES:
        for grid in select_known(region, css, classes):
            cells = [c for c in grid if isinstance(c.tag, str)]
            if not cells or len(cells) % columns:
                continue
            table = lxml.html.Element("table")
            for start in range(0, len(cells), columns):
                row = lxml.html.Element("tr")
                table.append(row)
                for cell in cells[start : start + columns]:
                    own = (cell.get("class") or "").split()
                    cell.tag = "th" if sel.GRID_HEADER_CLASS in own else "td"
                    cell.tail = None
                    row.append(cell)
            grid.text = None
            grid.append(table)


def _unwrap_nested_pre(region: HtmlElement) -> None:
    """``<pre><pre class=playground><code class=language-x>`` (mdBook): one block."""
    for outer in list(region.iter("pre")):
        children = list(outer)
        if len(children) == 1 and children[0].tag == "pre" and not (outer.text or "").strip():
            children[0].tail = None
            outer.drop_tag()


def _unwrap_heading_self_links(region: HtmlElement) -> None:
    """A heading whose text is a link to itself (mdBook's ``a.header``, Javadoc,
    DocBook): the text is the heading, the in-page link is chrome. A permalink glyph
    (``#``, ``¶``, an icon) goes with its link; the link's id stays a target, on the
    heading (``ID_ALIASES``)."""
    for heading in region.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        for anchor in list(heading.iter("a")):
            href = (anchor.get("href") or "").strip()
            if href.startswith("#") or not href and (anchor.get("name") or anchor.get("id")):
                move_ids(anchor, heading)
                if href and is_permalink_glyph(text_of(anchor)):
                    anchor.drop_tree()
                else:
                    anchor.drop_tag()


ID_ALIASES = "data-mdcrawl-ids"  # ids of removed elements, kept as targets on their holder
PERMALINK_GLYPHS = frozenset({"", "#", "¶", "§", "🔗", "⚓", "¤", "∞", "link", "permalink"})


def text_of(element: HtmlElement) -> str:
    """``element.text_content()``; an element of text alone (most links) is answered
    from its ``text``, without the XPath call."""
    if len(element):
        return element.text_content()
    return element.text or ""


def has_text(element: HtmlElement) -> bool:
    """``element.text_content().strip() != ""``, stopping at the first text that is not
    blank instead of joining a whole region's text."""
    return any(text.strip() for text in element.itertext())


def is_permalink_glyph(text: str) -> bool:
    return text.strip().lower() in PERMALINK_GLYPHS


def move_ids(source: HtmlElement, holder: HtmlElement) -> None:
    ids = [source.get("id"), source.get("name"), source.get(ID_ALIASES)]
    kept = " ".join(i for i in ids if i and i.strip())
    if kept:
        holder.set(ID_ALIASES, f"{holder.get(ID_ALIASES) or ''} {kept}".strip())


def _drop_permalinks(region: HtmlElement) -> None:
    """A link into the page drawn as a permalink glyph ("#", "¶", "§", or nothing) beside
    a signature or a term, not only in a heading, is the anchor's handle, not content:
    it goes, its ids stay on its parent."""
    for anchor in _short_fragment_links(region):
        parent = anchor.getparent()
        if parent is None or anchor.find(".//img") is not None:
            continue
        text = anchor.text_content()
        # a glyph, not a word: "[link](#link) objects" in a sentence is the writer's
        if is_permalink_glyph(text) and not _WORD_CHAR.search(text):
            move_ids(anchor, parent)
            anchor.drop_tree()


_WORD_CHAR = re.compile(r"\w")


def _short_fragment_links(region: HtmlElement) -> list[HtmlElement]:
    """Links into the page with a label of a few characters at most (a glyph):
    ``.//a[starts-with(normalize-space(@href), '#') and string-length(normalize-space())
    < 3]``, asked in Python of the links lxml finds by tag in C (libxml2 evaluates such a
    predicate slower than Python reads an attribute and a text: 40 -> 27 ms on three big
    pages)."""
    found = []
    for anchor in region.iter("a"):
        href = anchor.get("href")
        if anchor is region or href is None or not href.lstrip(_XML_SPACE).startswith("#"):
            continue
        if _normalized_length(text_of(anchor)) < 3:
            found.append(anchor)
    return found


# Links whose label could be an affordance's ("[source]", "View source"): short, and
# holding "src" or "source" in any case (``_is_affordance`` tests the label; no
# character but the ASCII capitals lower-cases to these letters, so lower-casing these
# finds every link that test could keep: test_extract checks it).
_AFFORDANCE_LETTERS = "SRCOUE"
_AFFORDANCE_LOWERED = str.maketrans(_AFFORDANCE_LETTERS, _AFFORDANCE_LETTERS.lower())


def _short_source_links(region: HtmlElement) -> list[HtmlElement]:
    """``.//a[@href and string-length(normalize-space()) < 16 and (contains(L, 'src') or
    contains(L, 'source'))]`` (L: the label with "SRCOUE" lower-cased), in Python as
    ``_short_fragment_links`` (58 -> 35 ms on three big pages)."""
    found = []
    for anchor in region.iter("a"):
        if anchor is region or anchor.get("href") is None:
            continue
        text = text_of(anchor)
        # lower() finds "src" wherever the translate does (it lower-cases those letters
        # the same), in C: most labels end here
        lowered = text.lower()
        if "src" not in lowered and "source" not in lowered:
            continue
        lowered = text.translate(_AFFORDANCE_LOWERED)
        if ("src" in lowered or "source" in lowered) and _normalized_length(text) < 16:
            found.append(anchor)
    return found


_XML_SPACE = " \t\r\n"  # what XPath's normalize-space() strips and collapses
_XML_SPACE_RUNS = re.compile(r"[ \t\r\n]+")


def _normalized_length(text: str) -> int:
    """``string-length(normalize-space(text))``."""
    return len(_XML_SPACE_RUNS.sub(" ", text).strip(" "))


# Labels of the links a docs page repeats beside each item for the viewer, not the reader:
# the highlighted source of the item ("Source", "[source]", "src").
AFFORDANCE_LABELS = frozenset({"source", "src", "view source", "show source"})
_LABEL_PUNCTUATION = re.compile(r"[\W_]+")
_SEPARATOR_BEFORE = re.compile(r"\s*[·|•]\s*$")
_SEPARATOR_AFTER = re.compile(r"^\s*[·|•]\s*")
_BLOCK_ANCESTORS = frozenset(
    {"p", "div", "li", "td", "th", "dt", "dd", "section", "summary", "blockquote", "table",
     "h1", "h2", "h3", "h4", "h5", "h6", "body"}
)  # fmt: skip


def _drop_repeated_affordances(region: HtmlElement) -> None:
    """A "Source" link repeated beside each item of a page, to a different place each
    time, is the viewer's affordance (like a permalink), not content. Only when the page
    repeats it (one "source" link in a sentence is the writer's) and never when it is
    all its block holds (a table column of source links is data)."""
    found = [a for a in _short_source_links(region) if _is_affordance(a)]
    if len(found) < 2 or len({a.get("href") for a in found}) < 2:
        return
    for anchor in found:
        block = next((b for b in anchor.iterancestors() if b.tag in _BLOCK_ANCESTORS), None)
        if block is None or not _has_other_text(block, anchor):
            continue
        _drop_with_separator(anchor)


def _is_affordance(anchor: HtmlElement) -> bool:
    """Labelled as one, and not an identifier that happens to be the word: a method
    named ``source`` links to ``…#method.source``, its name in its target."""
    href = anchor.get("href")
    if not href:
        return False
    text = anchor.text_content()
    lowered = text.lower()
    if "src" not in lowered and "source" not in lowered:
        return False  # every label below holds one of the two, whatever punctuation
    label = _affordance_label(text)
    return label in AFFORDANCE_LABELS and label.replace(" ", "") not in href.lower()


def _affordance_label(text: str) -> str:
    return " ".join(_LABEL_PUNCTUATION.sub(" ", text.lower()).split())


def _has_other_text(block: HtmlElement, anchor: HtmlElement) -> bool:
    own = len(_LABEL_PUNCTUATION.sub("", anchor.text_content()))
    return len(_LABEL_PUNCTUATION.sub("", block.text_content())) > own


def _drop_with_separator(anchor: HtmlElement) -> None:
    """The link goes with the "·" or "|" that joined it to its neighbour ("1.0 · source")."""
    previous, parent = anchor.getprevious(), anchor.getparent()
    before = previous.tail if previous is not None else parent.text
    if before and _SEPARATOR_BEFORE.search(before):
        before = _SEPARATOR_BEFORE.sub(" ", before)
        if previous is not None:
            previous.tail = before
        else:
            parent.text = before
    elif anchor.tail:
        anchor.tail = _SEPARATOR_AFTER.sub(" ", anchor.tail)
    move_ids(anchor, parent)
    anchor.drop_tree()


_LINKS_WITH_ELEMENTS = lxml.etree.XPath("descendant-or-self::a[*]")
_CARD_BLOCKS = ("h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "ul", "ol", "table", "pre")
_CARD_BLOCK_NAMES = frozenset(_CARD_BLOCKS)


def _links_around_blocks(region: HtmlElement) -> None:
    """A link wrapping blocks (a card: ``<a href><h2>Title</h2><p>Summary</p></a>``)
    cannot be a markdown link: the blocks stay blocks and the link moves onto the
    card's title (its first heading, else its first block)."""
    for anchor in _LINKS_WITH_ELEMENTS(region):  # a link of text alone wraps no block
        href = anchor.get("href")
        # by name in Python: a tag matcher for twelve names costs more to set up than
        # the few elements under a link (a <code>, a <span>) cost to look at
        blocks = [el for el in anchor.iterdescendants() if el.tag in _CARD_BLOCK_NAMES]
        if not href or not blocks:
            continue
        title = next((b for b in blocks if b.tag[0] == "h" and b.tag[1:].isdigit()), blocks[0])
        if href.startswith("#") and title.tag in _HEADING_TAGS:
            # A heading wrapped in a link to itself (Haddock's sections): a permalink,
            # as in ``_unwrap_heading_self_links``; the ids go to the heading.
            move_ids(anchor, title)
            anchor.drop_tag()
            continue
        link = lxml.html.Element("a", href=href)
        link.text, title.text = title.text, None
        link.extend(list(title))
        title.append(link)
        anchor.tag = "div"
        for name in list(anchor.attrib):
            del anchor.attrib[name]


def _drop_comments(region: HtmlElement) -> None:
    for comment in region.xpath(".//comment()"):
        if comment.getparent() is not None:
            comment.drop_tree()


def absolutize(region: HtmlElement, base: str) -> None:
    """``region.make_links_absolute(base, resolve_base_href=False,
    handle_failures="ignore")``, the same links rewritten the same way, without its
    walk testing fourteen attribute names on every element and its ``urljoin`` of every
    repeat of a link: the plain link attributes are read off each element's own names,
    ``url(...)`` in a ``style`` attribute as lxml reads it, each distinct link is joined
    once. A region with links lxml finds in other places (``<object>``, ``<meta>``,
    ``<param>``, ``<style>``) takes lxml's own walk."""
    joiner = linkjoin.joiner(base)  # each distinct link joined once (and fast: linkjoin)

    def join(href: str) -> str:
        try:
            return joiner.join(href)
        except ValueError:
            return href

    links: list[tuple[HtmlElement, str, str]] = []
    styled: list[HtmlElement] = []
    for element in region.iter(_ELEMENTS):
        if element.tag in _OTHER_LINK_PLACES:
            region.rewrite_links(join, resolve_base_href=False)
            return
        names = element.keys()  # (iterating an element gives its children)
        for name in names:
            if name in _LINK_ATTRS:
                links.append((element, name, element.get(name)))
            elif name == "style":
                styled.append(element)
    for element, name, link in links:
        new = join(link.strip())
        if new != link:
            _SET(element, name, new)  # HtmlMixin.set, without its Python frame
    for element in styled:
        _absolutize_style(element, join)


def _absolutize_style(element: HtmlElement, join: Callable[[str], str]) -> None:
    """The ``url(...)`` links of a ``style`` attribute rewritten as lxml's
    ``rewrite_links`` does: the last first, so that each one's position still holds."""
    for match in reversed(list(_CSS_URLS(element.get("style")))):
        url, start = match.group(1), match.start(1)
        if url[:1] == url[-1:] and url[:1] in ("'", '"'):
            url, start = url[1:-1], start + 1  # lxml.html's _unquote_match
        new = join(url.strip())
        if new == url:
            continue
        current = element.get("style")
        if not start and len(current) == len(url):
            current = new
        else:
            current = current[:start] + new + current[start + len(url) :]
        element.set("style", current)


_LINK_ATTRS = frozenset(lxml.html.defs.link_attrs)
_SET = lxml.etree.ElementBase.set  # what lxml.html's HtmlMixin.set calls (super().set)
# Where lxml's iterlinks finds links besides those attributes and ``style`` (its tags
# without a namespace).
_OTHER_LINK_PLACES = frozenset({"object", "meta", "param", "style"})
# lxml.html's own pattern for a stylesheet's url(...) (``_iter_css_urls``).
_CSS_URLS = re.compile(r"""url\(("[^"]*"|'[^']*'|[^)]*)\)""", re.I).finditer


def extract_page(
    root: HtmlElement,
    html: str,
    url: str,
    template: SiteTemplate | None = None,
    generator_rules: bool = True,
    nodes: list[HtmlElement] | None = None,
) -> Extraction:
    """Run the cascade on a parsed page; the region comes back pruned and absolute.
    ``generator_rules=False`` uses no generator rule at all (the generic engine alone).
    ``nodes``: ``list(root.iter())`` of the page as parsed, if the caller holds it (the
    page's scan walks that list instead of the tree)."""
    base = page_base_url(root, url)
    rule, page = _detect(root, nodes) if generator_rules else (None, None)
    # The page's class attributes (its scan has them, else one walk in C): a selector
    # naming a class the page lacks is not run (each query walks the whole tree)
    classes = known_classes(page[1]) if page is not None else class_names(root)
    nav = site_nav(root, rule, base, classes)
    region, extractor, quality = find_region(root, html, rule, template, classes)
    # A rule's or a structural selector's region is part of the page, untouched since the
    # page's scan; the template's and density's dropped chrome, readability's is new.
    selected = extractor == (rule.name if rule else None) or extractor.startswith("structural:")
    region_classes = prune(
        region,
        rule if extractor == (rule.name if rule else None) else None,
        page if selected else None,
    )
    absolutize(region, base)
    metas = still_in(root, page_metas(root, page))
    redirect = redirect_target(root, base, metas)
    return Extraction(region, extractor, quality, nav, base, redirect, region_classes, metas)
