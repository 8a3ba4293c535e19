"""Annotation of a content region before conversion (lxml, fast XPath): each code
block's language, Sphinx signatures, admonitions turned into labelled blockquotes, and
heading permalinks dropped. The converter (``markdown.py``) reads the marks as attributes.

Generator knowledge here (see ``selectors.py`` for the list): language class patterns
(``language-``, ``highlight-``, ``brush-``), Sphinx's ``default`` lexer, rustdoc's bare
``rust`` class, Sphinx signature classes.
"""

from __future__ import annotations

import re

from lxml.html import HtmlElement

from . import selectors as sel
from .extract import class_names, is_permalink_glyph, move_ids, select_known, text_of

LANG_ATTR = "data-mdcrawl-lang"
LABEL_ATTR = "data-mdcrawl-label"
SIGNATURE_ATTR = "data-mdcrawl-sig"

_LANG_CLASS = re.compile(r"^(?:language|lang|highlight|brush)-(.+)$")
# Sphinx writes "highlight-default" for its default lexer, which is Python's.
_LANG_ALIASES = {"default": "python"}
_NO_LANG = {"none", "nohighlight", "plain", "plaintext", "no-highlight"}
# Classes that name a language on their own (rustdoc marks Rust code with class="rust").
_BARE_LANG_CLASSES = {"rust"}
_ADMONITION_KINDS = (
    "note",
    "warning",
    "tip",
    "hint",
    "important",
    "caution",
    "danger",
    "error",
    "attention",
    "info",
    "seealso",
    "todo",
    "deprecated",
    "example",
    "success",
    "question",
)
_LANG_SEARCH_DEPTH = 5  # pre -> div.highlight -> div.highlight-python, plus line-number tables


def annotate(region: HtmlElement, classes: str | None = None) -> None:
    """Record what the converter cannot see locally: languages, admonition labels.
    ``classes``: class names holding all of the region's (``extract.known_classes``), if
    known; else they are read here (one walk)."""
    for pre in region.iter("pre"):
        lang = code_language(pre)
        if lang:
            pre.set(LANG_ATTR, lang)
    for dt in region.iter("dt"):
        if is_signature(dt):
            dt.set(SIGNATURE_ATTR, "1")
    if classes is None:
        classes = class_names(region)  # marking boxes only takes classes away
    for css in sel.ADMONITION:
        for box in select_known(region, css, classes):
            if box.get(LABEL_ATTR) is None:
                _mark_admonition(box, classes)
    _drop_permalinks(region)


def _drop_permalinks(region: HtmlElement) -> None:
    """A heading's permalink (``¶``, ``#``, a link icon: a link to a fragment with no
    words) goes; its id stays a target on the heading."""
    for heading in region.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        for anchor in list(heading.iter("a")):
            if "#" in (anchor.get("href") or "") and is_permalink_glyph(text_of(anchor)):
                move_ids(anchor, heading)
                anchor.drop_tree()


def code_language(pre: HtmlElement) -> str:
    """The language named by the markup on the pre, its code child, or its wrappers."""
    candidates = [pre, *pre.findall("code")]
    ancestor = pre.getparent()
    for _ in range(_LANG_SEARCH_DEPTH):
        if ancestor is None:
            break
        candidates.append(ancestor)
        ancestor = ancestor.getparent()
    for element in candidates:
        lang = _language_of(element)
        if lang is not None:
            return lang
    return ""


def _language_of(element: HtmlElement) -> str | None:
    data_lang = element.get("data-lang") or element.get("data-language")
    if data_lang:
        return _normalise_lang(data_lang)
    for cls in (element.get("class") or "").split():
        match = _LANG_CLASS.match(cls)
        if match:
            return _normalise_lang(match.group(1))
        if cls in _BARE_LANG_CLASSES and element.tag == "pre":
            return cls
    return None


def _normalise_lang(name: str) -> str:
    name = name.strip().lower()
    if name in _NO_LANG:
        return ""
    return _LANG_ALIASES.get(name, name)


def _mark_admonition(box: HtmlElement, classes: str) -> None:
    titles = {el for css in sel.ADMONITION_TITLE for el in select_known(box, css, classes)}
    label = ""
    for child in box:
        if child in titles:  # only a direct child names the box, not a nested title
            label = " ".join(child.text_content().split()).rstrip(":")
            child.drop_tree()
            break
    if not label:
        label = _kind_from_classes(box.get("class") or "")
    box.tag = "blockquote"
    box.set(LABEL_ATTR, label[:1].upper() + label[1:] if label else "Note")


def _kind_from_classes(classes: str) -> str:
    for cls in classes.split():
        if cls in _ADMONITION_KINDS:
            return "See also" if cls == "seealso" else cls
    return ""


# ---------------------------------------------------------------- convert (bs4)


def is_signature(dt: HtmlElement) -> bool:
    """Sphinx API signatures: ``dt.sig`` (Sphinx >= 4) or a dt holding ``.descname``."""
    return "sig" in (dt.get("class") or "").split() or bool(dt.find_class("descname"))

