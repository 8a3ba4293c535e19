"""One section of a page's markdown, found by its heading text or its anchor. Pure."""

from __future__ import annotations

import re

from ..chunks import blocks
from ..rewrite import Slugger, github_slug, plain_text

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")


def section_of(markdown: str, wanted: str) -> str | None:
    """The heading that matches ``wanted`` (its anchor, ``#anchor``, or its text, case
    and punctuation aside) and everything under it down to the next heading of the same
    or a higher level; None if no heading matches."""
    key = github_slug(wanted.strip().lstrip("#").strip().lower())
    slugs = Slugger()
    out: list[str] = []
    level = 0
    for text, is_heading in blocks(markdown):
        match = _ATX.match(text.rstrip("\r\n")) if is_heading else None
        if match and out and len(match[1]) <= level:
            break
        if match and not out:
            anchor = slugs.slug(match[2] or "")
            if key in (anchor, github_slug(plain_text(match[2] or "").lower())):
                level = len(match[1])
                out.append(text.rstrip("\n"))
            continue
        if out:
            out.append(text.rstrip("\n"))
    return "\n\n".join(out) + "\n" if out else None
