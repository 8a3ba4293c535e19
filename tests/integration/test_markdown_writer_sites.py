"""The direct lxml -> markdown writer (``mdwriter``) against the soup path it replaces,
on real documentation trees: the same markdown and placeholder blocks, page for page."""

from __future__ import annotations

from pathlib import Path

import pytest
from mdcrawl.convert import parse_document
from mdcrawl.extract import extract_page
from mdcrawl.markdown import convert_soup_path, prepare_region
from mdcrawl.mdwriter import Unusual, write_markdown

from tests.support.sites import require_site

# (site, pages sampled): every k-th page of the sorted tree, enough to meet each
# generator's markup while the whole file runs in well under half a minute.
SAMPLES = {
    "django": 80,
    "python": 60,
    "rust-core": 300,
    "nodejs": 20,
    "glib": 15,
    "sbcl": 40,
    "aeson": 25,
    "commons-lang3": 40,
}
WRITTEN_SHARE = 0.9  # the writer itself must handle nearly every page, not fall back


def _root(name: str) -> Path:
    if name == "rust-core":  # core's API pages, beside the Rust book rust-doc installs
        return require_site("rust-book").root.parent / "core"
    return require_site(name).root


def _sample(root: Path, count: int) -> list[Path]:
    files = sorted(p for p in root.rglob("*.html") if p.is_file())
    step = max(1, len(files) // count)
    return files[::step][:count]


def _region(path: Path, root: Path):  # noqa: ANN202
    page = parse_document(path.read_bytes(), None)
    url = "http://127.0.0.1:8000/" + str(path.relative_to(root))
    region = extract_page(page.root, page.text, url).region
    prepare_region(region)
    return region


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_writer_matches_the_soup_path_on_real_pages(name: str) -> None:
    root = _root(name)
    written = 0
    differ = []
    pages = _sample(root, SAMPLES[name])
    for path in pages:
        region = _region(path, root)
        try:
            mine = write_markdown(region)
        except Unusual:
            continue
        written += 1
        if mine != convert_soup_path(region):
            differ.append(str(path.relative_to(root)))
    assert not differ, f"writer and soup path differ on {differ}"
    assert written >= WRITTEN_SHARE * len(pages), f"writer fell back on {len(pages) - written}"
