"""Command-line flags derived from ``options.py``: ``mdcrawl crawl``'s crawl options and
``mdcrawl serve``'s caps. Values are checked by the option's own validator as argparse
reads them, so a bad flag is a usage error naming the flag and the bound."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from .errors import InvalidInput
from .options import CrawlOptionsModel, Model, check_value, hosted_caps, knob, option_fields


def flag_of(name: str, info: FieldInfo) -> str:
    """``--max-pages``; ``--no-generator-rules`` for a switch that is on by default."""
    declared = knob(info).flag
    if declared:
        return declared
    dashed = name.replace("_", "-")
    return f"--no-{dashed}" if info.default is True else f"--{dashed}"


def add_option_arguments(
    parser: argparse.ArgumentParser, model: Model = CrawlOptionsModel, given_only: bool = False
) -> None:
    """One flag per option of ``model``, its default and bounds the model's. With
    ``given_only`` (`mdcrawl submit`) a flag left out sets nothing: the service decides."""
    for name, info in option_fields(model):
        help_text = info.description or ""
        unset = {"default": argparse.SUPPRESS} if given_only else {}
        if info.annotation is bool:
            on = info.default is True  # the flag turns it off
            action = "store_false" if on else "store_true"
            shown = f"turn off {help_text}" if on else help_text
            parser.add_argument(flag_of(name, info), dest=name, action=action, help=shown, **unset)
        elif _is_sequence(info):
            parser.add_argument(
                flag_of(name, info),
                dest=name,
                action="append",
                default=argparse.SUPPRESS if given_only else [],
                type=_parser(info, item=True),
                metavar=knob(info).metavar or None,
                help=f"{help_text} (repeatable)",
            )
        else:
            shown = "" if info.default is None or given_only else " (default: %(default)s)"
            parser.add_argument(
                flag_of(name, info),
                dest=name,
                type=_parser(info),
                default=argparse.SUPPRESS if given_only else info.default,
                metavar=knob(info).metavar or None,
                help=help_text + shown,
            )


def model_from_arguments(args: argparse.Namespace, model: Model = CrawlOptionsModel) -> Any:
    """The model's value from parsed flags; ``InvalidInput`` for what only the whole can
    tell (more globs than allowed)."""
    values = {name: getattr(args, name) for name, _ in option_fields(model)}
    for name, info in option_fields(model):
        if _is_sequence(info):
            values[name] = tuple(values[name])
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        detail = "; ".join(
            f"{flag_of(str(e['loc'][0]), model.model_fields[str(e['loc'][0])])}: {e['msg']}"
            for e in exc.errors()
        )
        raise InvalidInput(detail) from None


def given_options(args: argparse.Namespace, model: Model = CrawlOptionsModel) -> dict[str, Any]:
    """The options given as flags (``given_only``), as a JSON body holds them."""
    given = {name: getattr(args, name) for name, _ in option_fields(model) if name in args}
    return {k: list(v) if isinstance(v, list | tuple) else v for k, v in given.items()}


def add_cap_arguments(parser: argparse.ArgumentParser, model: Model = CrawlOptionsModel) -> None:
    """``mdcrawl serve``'s caps: the most a job may ask for, each within the option's own
    bounds (default: the hosted caps)."""
    caps = hosted_caps(model)
    for name, info in option_fields(model):
        if name not in caps:
            continue
        parser.add_argument(
            flag_of(name, info),
            dest=f"cap_{name}",
            type=_parser(info),
            default=caps[name],
            metavar=knob(info).metavar or None,
            help=f"{info.description} (default: %(default)g)",
        )


def caps_from_arguments(args: argparse.Namespace, model: Model = CrawlOptionsModel) -> dict:
    return {name: getattr(args, f"cap_{name}") for name in hosted_caps(model)}


def _is_sequence(info: FieldInfo) -> bool:
    return getattr(info.annotation, "__origin__", None) is tuple


def _parser(info: FieldInfo, item: bool = False) -> Callable[[str], Any]:
    if item:  # one glob of a repeatable flag: checked against the item's type
        args = info.annotation.__args__  # type: ignore[union-attr]
        info = FieldInfo.from_annotation(args[0])

    def parse(text: str) -> Any:
        try:
            return check_value(info, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r}: {str(exc).lower()}") from None

    return parse
