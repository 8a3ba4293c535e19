"""Crawl flags become CrawlOptions."""

from __future__ import annotations

from mdcrawl.cli import build_parser, options_from
from mdcrawl.models import CrawlOptions


def test_no_generator_rules_turns_the_rules_off_and_survives_the_stores() -> None:
    args = build_parser().parse_args(["crawl", "http://docs.test/", "--no-generator-rules"])
    options = options_from(args)
    assert options.generator_rules is False
    assert CrawlOptions.from_dict(options.to_dict()) == options
    default = options_from(build_parser().parse_args(["crawl", "http://docs.test/"]))
    assert default.generator_rules is True
