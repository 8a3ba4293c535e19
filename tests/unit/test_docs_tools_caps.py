"""The MCP crawl tool served by `mdcrawl serve` (/mcp) keeps the server's page cap, as
POST /jobs does (`serve --max-pages`, else the serve profile's); on stdio (the user's own
machine) it takes the CLI's default."""

from __future__ import annotations

from pathlib import Path

import pytest
from mdcrawl.errors import InvalidInput
from mdcrawl.library.tools import CrawlRequest, DocsTools
from mdcrawl.models import CrawlOptions
from mdcrawl.options import OptionLimits, Profile

CAP = OptionLimits.of(Profile.SERVE).caps["max_pages"]


def _served(root: Path, checked: list[str]) -> DocsTools:
    return DocsTools(root, check_url=checked.append)


def test_a_served_crawl_over_the_cap_is_refused_before_anything_is_fetched(tmp_path: Path):
    checked: list[str] = []
    request = CrawlRequest("http://127.0.0.1:9/", max_pages=CAP + 1)
    with pytest.raises(InvalidInput, match="at most"):
        _served(tmp_path, checked).crawl(request, lambda job: None)
    assert checked == []  # refused before the URL was even looked at


def test_defaults_are_the_hosted_cap_when_served_and_the_cli_default_on_stdio(tmp_path: Path):
    assert _served(tmp_path, [])._max_pages(None) == min(
        CrawlOptions.max_pages, CAP
    )
    assert DocsTools(tmp_path)._max_pages(None) == CrawlOptions.max_pages
    assert DocsTools(tmp_path)._max_pages(CAP * 3) == CAP * 3
    with pytest.raises(InvalidInput):
        DocsTools(tmp_path)._max_pages(0)


def test_a_served_crawl_keeps_the_page_cap_the_server_was_given(tmp_path: Path):
    tools = DocsTools(tmp_path, check_url=[].append, page_cap=7)
    assert tools._max_pages(None) == 7
    assert tools._max_pages(7) == 7
    with pytest.raises(InvalidInput, match="at most 7"):
        tools._max_pages(8)

