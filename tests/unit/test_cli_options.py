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


def test_submit_sends_only_the_options_given_with_the_crawl_flags_names() -> None:
    from mdcrawl.client.cli_commands import submit_body

    common = ["--api", "http://127.0.0.1:9", "--api-key", "k"]
    args = build_parser().parse_args(
        ["submit", "http://docs.test/", *common, "--budget", "30", "--include", "a/**",
         "--no-generator-rules", "--ignore-robots", "--job-id", "job-00001"]
    )
    assert submit_body(args) == {
        "url": "http://docs.test/",
        "budget_s": 30.0,
        "include": ["a/**"],
        "generator_rules": False,
        "ignore_robots": True,
        "job_id": "job-00001",
    }
    bare = build_parser().parse_args(["submit", "http://docs.test/", *common])
    assert submit_body(bare) == {"url": "http://docs.test/"}  # the service's defaults


def test_more_globs_than_an_api_allows_is_a_usage_error_naming_the_flag() -> None:
    import pytest
    from mdcrawl.errors import InvalidInput

    many = [arg for i in range(51) for arg in ("--exclude", f"x{i}/**")]
    args = build_parser().parse_args(["crawl", "http://docs.test/", *many])
    with pytest.raises(InvalidInput, match="--exclude"):
        options_from(args)
