"""What changed between two versions of a site: pages added, removed and changed, and
``changes.md``, the report a re-crawl writes beside ``docs.md``. Pure functions."""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PageState:
    url: str
    title: str
    hash: str  # sha256 of the page's markdown


@dataclass(frozen=True)
class Changes:
    site: str
    version: str
    previous: str | None  # the version compared with; None for a site's first crawl
    previous_at: float | None
    added: tuple[PageState, ...] = ()
    removed: tuple[PageState, ...] = ()
    changed: tuple[PageState, ...] = ()
    unchanged: int = 0

    @property
    def count(self) -> int:
        return len(self.added) + len(self.removed) + len(self.changed)

    def to_dict(self) -> dict[str, object]:
        def urls(pages: Sequence[PageState]) -> list[str]:
            return [p.url for p in pages]

        return {
            "site": self.site,
            "version": self.version,
            "previous": self.previous,
            "added": urls(self.added),
            "removed": urls(self.removed),
            "changed": urls(self.changed),
            "unchanged": self.unchanged,
        }


def compare(
    site: str,
    version: str,
    now: Sequence[PageState],
    before: Sequence[PageState] | None,
    previous: str | None = None,
    previous_at: float | None = None,
) -> Changes:
    """``now`` against ``before`` (None: nothing to compare with), by URL and content."""
    if before is None:
        return Changes(site, version, None, None)
    old = {p.url: p for p in before}
    new = {p.url: p for p in now}
    return Changes(
        site,
        version,
        previous,
        previous_at,
        added=tuple(p for p in now if p.url not in old),
        removed=tuple(p for p in before if p.url not in new),
        changed=tuple(p for p in now if p.url in old and old[p.url].hash != p.hash),
        unchanged=sum(1 for p in now if p.url in old and old[p.url].hash == p.hash),
    )


def changes_md(changes: Changes) -> str:
    """The report as markdown: a summary line, then one list per kind of change."""
    lines = [f"# Changes: {changes.site} {changes.version}", ""]
    if changes.previous is None:
        lines += ["First crawl of this site in the library: nothing to compare with.", ""]
        return "\n".join(lines)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(changes.previous_at or 0))
    lines += [
        f"Compared with the previous crawl ({changes.previous}, {when}): "
        f"{len(changes.added)} added, {len(changes.removed)} removed, "
        f"{len(changes.changed)} changed, {changes.unchanged} unchanged.",
        "",
    ]
    for heading, pages in (
        ("Added", changes.added),
        ("Removed", changes.removed),
        ("Changed", changes.changed),
    ):
        if pages:
            lines += [f"## {heading}", ""]
            lines += [f"- [{p.title or p.url}]({p.url})" for p in pages]
            lines.append("")
    return "\n".join(lines)


def page_diff(url: str, before: str, after: str) -> str:
    """A unified diff of one page's markdown, labelled with its URL."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a {url}",
            tofile=f"b {url}",
        )
    )


def patches(changes: Changes, read: Callable[[str, str], tuple[str, str]]) -> str:
    """Unified diffs of every changed page; ``read(url, hash)`` gives (before, after)."""
    return "\n".join(page_diff(p.url, *read(p.url, p.hash)) for p in changes.changed)
