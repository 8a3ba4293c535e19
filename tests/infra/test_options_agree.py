"""The crawl options are declared once (mdcrawl/options.py): the CLI flags, the API's
request model and schema, the Lambda settings and the CDK context validation agree on
every option's default and bounds, and a new option shows up in all of them."""

from __future__ import annotations

import argparse
from typing import Annotated, Any

import pytest
from mdcrawl.cli import build_parser
from mdcrawl.names import cap_env
from mdcrawl.option_flags import add_cap_arguments, add_option_arguments, flag_of
from mdcrawl.options import (
    CrawlOptionsModel,
    Knob,
    OptionLimits,
    Profile,
    bounds,
    hosted_caps,
    option_fields,
)
from mdcrawl.runtime.settings import AwsSettings, settings_class
from mdcrawl.service.models import JobRequest
from mdcrawl.service.schema import request_schema
from pydantic import Field, ValidationError

from infra.config import ConfigError, Settings

from .test_resources import CONTEXT

OPTIONS = dict(option_fields())
NUMERIC = {n: i for n, i in OPTIONS.items() if bounds(i)}
TABLE_ENV = {
    f"MDCRAWL_{t}_TABLE": "t"
    for t in ("JOBS", "FRONTIER", "CACHE", "PAGES", "EVENTS", "CONNECTIONS")
}
BASE_ENV = {**TABLE_ENV, "MDCRAWL_BUCKET": "b"}


def _edges(info: Any) -> list[tuple[Any, bool]]:
    """(value, valid) at each declared bound: on it, and just past it."""
    found = bounds(info)
    step = 1 if info.annotation in (int, int | None) else 0.5
    edges = []
    if "ge" in found:
        edges += [(found["ge"], True), (found["ge"] - step, False)]
    if "le" in found:
        edges += [(found["le"], True), (found["le"] + step, False)]
    return edges


def _cli_accepts(parser: argparse.ArgumentParser, argv: list[str]) -> bool:
    try:
        parser.parse_args(argv)
    except SystemExit:
        return False
    return True


def test_every_option_is_a_crawl_flag_an_api_field_and_in_the_schema() -> None:
    crawl = build_parser()._subparsers._group_actions[0].choices["crawl"]  # type: ignore[union-attr]
    flags = {a.dest: a for a in crawl._actions}
    schema = request_schema(OptionLimits.of(Profile.LOCAL))["properties"]
    for name, info in OPTIONS.items():
        assert flags[name].option_strings == [flag_of(name, info)], name
        assert name in JobRequest.model_fields and name in schema, name
        if info.annotation is not bool and not isinstance(info.default, tuple):
            assert flags[name].default == info.default, name
        assert schema[name].get("description", "").startswith(info.description or ""), name


@pytest.mark.parametrize("name", sorted(NUMERIC))
def test_every_bound_is_the_same_in_the_cli_the_api_and_the_schema(name: str) -> None:
    info = NUMERIC[name]
    parser = build_parser()
    local = request_schema(OptionLimits.of(Profile.LOCAL))["properties"][name]
    found = bounds(info)
    assert local.get("minimum") == found.get("ge") and local.get("maximum") == found.get("le")
    for value, valid in _edges(info):
        argv = ["crawl", "http://docs.test/", flag_of(name, info), str(value)]
        assert _cli_accepts(parser, argv) is valid, (name, value)
        try:
            JobRequest.model_validate({"url": "http://docs.test/", name: value})
            api_valid = True
        except ValidationError:
            api_valid = False
        assert api_valid is valid, (name, value)


@pytest.mark.parametrize("name", sorted(hosted_caps()))
def test_every_cap_agrees_in_the_schema_the_lambda_settings_cdk_and_serve(name: str) -> None:
    info, cap = OPTIONS[name], hosted_caps()[name]
    hosted = request_schema()["properties"][name]
    assert hosted["maximum"] == cap
    assert hosted["default"] == min(info.default, cap)
    # Lambda settings: read from the env var infra sets, default the hosted cap
    settings = AwsSettings.from_env(BASE_ENV)
    assert getattr(settings, name) == cap and settings.limits.options.caps[name] == cap
    assert AwsSettings.from_env({**BASE_ENV, cap_env(name): "3"}).limits.options.caps[name] == 3
    # CDK: the same default (when cdk.json leaves it out), the option's own bounds
    assert Settings.from_mapping({}).caps[name] == cap
    assert Settings.from_mapping(CONTEXT).caps[name] == CONTEXT.get(name, cap)
    serve = argparse.ArgumentParser()
    add_cap_arguments(serve)
    assert serve.parse_args([]).__dict__[f"cap_{name}"] == cap
    for value, valid in _edges(info):
        assert _accepts_env(name, value) is valid, (name, value)
        assert _accepts_context(name, value) is valid, (name, value)
        assert _cli_accepts(serve, [flag_of(name, info), str(value)]) is valid, (name, value)


def _accepts_env(name: str, value: Any) -> bool:
    try:
        AwsSettings.from_env({**BASE_ENV, cap_env(name): str(value)})
    except RuntimeError:
        return False
    return True


def _accepts_context(name: str, value: Any) -> bool:
    try:
        Settings.from_mapping({name: value})
    except ConfigError:
        return False
    return True


class WithShiny(CrawlOptionsModel):
    """A crawl option a newcomer adds: one field, nothing else."""

    shiny: Annotated[
        int, Field(ge=2, le=9, description="how shiny the output is"), Knob(metavar="N", cap=5)
    ] = 7


class ShinyRequest(JobRequest, WithShiny):
    pass


def test_a_new_option_appears_in_all_four_without_another_change() -> None:
    parser = argparse.ArgumentParser()
    add_option_arguments(parser, WithShiny)
    assert parser.parse_args(["--shiny", "3"]).shiny == 3
    assert not _cli_accepts(parser, ["--shiny", "10"])
    schema = request_schema(OptionLimits.of(Profile.HOSTED, shiny=5), ShinyRequest)
    assert schema["properties"]["shiny"] == {
        "type": "integer",
        "minimum": 2,
        "maximum": 5,
        "description": "how shiny the output is",
        "default": 5,
    }
    settings = settings_class(WithShiny)
    assert settings.from_env({**BASE_ENV, "MDCRAWL_SHINY": "4"}).shiny == 4  # type: ignore[attr-defined]
    assert settings.from_env(BASE_ENV).limits.options.caps["shiny"] == 5
    assert Settings.from_mapping({"shiny": 3}, WithShiny).caps["shiny"] == 3
    with pytest.raises(ConfigError, match="'shiny'"):
        Settings.from_mapping({"shiny": 11}, WithShiny)
