"""The generated scale site: the size asked for, every page reachable, same bytes."""

from __future__ import annotations

import re
from pathlib import Path

from bench.bigsite import write_site


def test_every_page_is_reachable_from_the_index(tmp_path: Path) -> None:
    assert write_site(tmp_path, 250) == 250
    files = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.html")}
    assert len(files) == 250
    seen, todo = {"index.html"}, ["index.html"]
    while todo:
        text = (tmp_path / todo.pop()).read_text()
        for href in re.findall(r'href="/([^"#]+)', text):
            if href not in seen:
                assert href in files, href
                seen.add(href)
                todo.append(href)
    assert seen == files


def test_the_same_size_gives_the_same_bytes(tmp_path: Path) -> None:
    write_site(tmp_path / "a", 120)
    write_site(tmp_path / "b", 120)
    for page in (tmp_path / "a").rglob("*.html"):
        assert page.read_bytes() == (tmp_path / "b" / page.relative_to(tmp_path / "a")).read_bytes()
