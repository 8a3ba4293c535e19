"""Gold: where a site's content is, as a person reading its HTML marks it.

A gold file (``tests/fixtures/gold/<site>.toml``) is written by reading the site's pages,
never by copying the extractor's rules, and reviewed like code::

    site = "glib"
    generator = "gtk-doc"
    read = ["index.html", "glib-Hash-Tables.html"]   # the pages it was written from
    content = ["/html/body/div[1]"]                   # first XPath that matches wins
    chrome = ["//table[contains(@class, 'navigation')]"]  # navigation, headers, footers
    ignore = ["//td[@class='listing_lines']"]         # UI inside the content

Without a gold file the scorer uses ``GENERIC``, a labelled fallback built from HTML's
own landmarks (``main``, ``article``, ``nav``, ``footer``...).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# Never text a reader sees, on any site.
ALWAYS_IGNORED = (
    "//script",
    "//style",
    "//noscript",
    "//template",
    "//button",
    "//svg",
    "//*[@hidden]",
    "//*[@aria-hidden='true' and not(.//pre)]",
)


@dataclass(frozen=True)
class Gold:
    name: str
    content: tuple[str, ...]  # XPaths of the content region, most specific first
    chrome: tuple[str, ...] = ()  # XPaths of navigation, headers, footers, sidebars
    ignore: tuple[str, ...] = ()  # XPaths of UI inside the content (copy buttons, ¶)
    generator: str = ""
    read: tuple[str, ...] = field(default_factory=tuple)  # pages the gold was read from
    generic: bool = False  # True for the fallback, so reports can say so


# HTML's own landmarks and the glyphs every generator uses for permalinks: what a
# reader would call content and chrome on a site nobody wrote gold for.
GENERIC = Gold(
    name="generic fallback (no gold file: HTML landmarks only)",
    content=("//main", "//*[@role='main']", "//article", "//body"),
    chrome=(
        "//nav",
        "//header",
        "//footer",
        "//*[@role='navigation']",
        "//*[@role='banner']",
        "//*[@role='contentinfo']",
        "//aside",
    ),
    ignore=(
        "//a[normalize-space()='¶' or normalize-space()='#' or normalize-space()='§']",
        "//*[contains(concat(' ', @class, ' '), ' linenos ')]",
        "//*[contains(@class, 'line-numbers') or contains(@class, 'lineno')]",
    ),
    generic=True,
)


def load_gold(path: Path) -> Gold:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return Gold(
        name=str(data.get("site", path.stem)),
        content=tuple(data["content"]),
        chrome=tuple(data.get("chrome", ())),
        ignore=tuple(data.get("ignore", ())),
        generator=str(data.get("generator", "")),
        read=tuple(data.get("read", ())),
    )


def find_gold(folder: Path | None, site: str) -> Gold:
    """The gold file for ``site`` in ``folder``, or the generic fallback."""
    if folder is not None and (folder / f"{site}.toml").is_file():
        return load_gold(folder / f"{site}.toml")
    return GENERIC
