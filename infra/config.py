"""The limits a team tunes, read from CDK context (``cdk.json`` or ``-c key=value``) and
validated at synth, so a typo fails ``cdk synth`` with a clear message instead of
deploying a broken stack.

The caps on crawl options (``max_pages``, ``budget_s``...: the most a caller may ask for)
are not declared here: each capped option of ``mdcrawl.options`` is a context key of the
same name, its default the hosted cap and its bounds the option's own."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from constructs import Node
from mdcrawl.options import CrawlOptionsModel, Model, check_value, hosted_caps

# key -> (default, minimum, maximum); integers only.
_INT_LIMITS: dict[str, tuple[int, int, int]] = {
    "retention_days": (7, 1, 3650),  # job outputs (S3 jobs/), job records, events
    "cache_retention_days": (30, 1, 3650),  # cached bodies and markdown (S3 cache/)
    "log_retention_days": (30, 1, 3653),
}
_STAGE = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class ConfigError(ValueError):
    """A context value is missing its shape or range; the message names key and rule."""


# Keys that were renamed: a stale cdk.json must fail, not be silently ignored.
_RENAMED = {"budget_seconds": "budget_s"}


@dataclass(frozen=True)
class Settings:
    caps: dict[str, float]  # crawl option -> the most a caller may ask for (options.py)
    retention_days: int
    cache_retention_days: int
    log_retention_days: int
    stage: str
    log_level: str
    alarm_email: str
    cors_origins: tuple[str, ...]
    # function name -> reserved concurrent executions (absent: the account's shared pool)
    reserved_concurrency: dict[str, int] = field(default_factory=dict)

    @property
    def is_production(self) -> bool:
        return self.stage == "prod"

    @classmethod
    def from_context(cls, node: Node) -> Settings:
        keys = (*_KEYS, *hosted_caps(), *_RENAMED)
        return cls.from_mapping({key: node.try_get_context(key) for key in keys})

    @classmethod
    def from_mapping(cls, raw: dict[str, Any], options: Model = CrawlOptionsModel) -> Settings:
        for old, new in _RENAMED.items():
            if raw.get(old) is not None:
                raise ConfigError(f"context '{old}' is now called '{new}'")
        ints = {key: _int(key, raw.get(key), *limits) for key, limits in _INT_LIMITS.items()}
        return cls(
            caps=_caps(raw, options),
            **ints,
            stage=_choice(raw, "stage", "prod", _STAGE.match, "lowercase letters, digits, '-'"),
            log_level=_choice(raw, "log_level", "INFO", _LOG_LEVELS.__contains__, str(_LOG_LEVELS)),
            alarm_email=_choice(raw, "alarm_email", "", _is_email_or_empty, "an e-mail address"),
            cors_origins=_origins(raw.get("cors_origins")),
            reserved_concurrency=_reserved(raw.get("reserved_concurrency")),
        )


def _caps(raw: dict[str, Any], options: Model) -> dict[str, float]:
    """Each capped option's cap: the context's value (checked as a value of the option:
    same type, same bounds) or the hosted default."""
    caps = hosted_caps(options)
    for name in caps:
        value = raw.get(name)
        if value is None:
            continue
        try:
            caps[name] = check_value(options.model_fields[name], value)
        except ValueError as exc:
            raise ConfigError(f"context '{name}' must be a valid {name}: {exc}") from None
    return caps


def _int(key: str, value: Any, default: int, low: int, high: int) -> int:
    if value is None:
        return default
    # CLI context (-c key=5) arrives as a string; booleans are ints in Python: refuse them.
    if isinstance(value, str) and re.fullmatch(r"\d+", value.strip()):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"context '{key}' must be an integer, got {value!r}")
    if not low <= value <= high:
        raise ConfigError(f"context '{key}' must be between {low} and {high}, got {value}")
    return value


def _choice(raw: dict[str, Any], key: str, default: str, ok: Any, rule: str) -> str:
    value = raw.get(key)
    if value is None:
        return default
    if not isinstance(value, str) or not ok(value):
        raise ConfigError(f"context '{key}' must be {rule}, got {value!r}")
    return value


def _is_email_or_empty(value: str) -> bool:
    return value == "" or bool(_EMAIL.match(value))


def _origins(value: Any) -> tuple[str, ...]:
    if value is None:
        return ("*",)
    if (
        not isinstance(value, list)
        or not value
        or not all(
            isinstance(o, str) and (o == "*" or re.match(r"^https?://[^/\s]+$", o)) for o in value
        )
    ):
        raise ConfigError(
            f"context 'cors_origins' must be a non-empty list of '*' or origins "
            f"like 'https://example.com', got {value!r}"
        )
    return tuple(value)


def _reserved(value: Any) -> dict[str, int]:
    """``{"processor": 50, ...}``: each named function gets that many executions of the
    account's concurrency for itself, and never more (a runaway crawl cannot starve the
    account's other functions, nor theirs this one). Opt-in: a new account's limit can
    be as low as 10, and a reservation must leave 100 unreserved."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and FUNCTION_NAME.match(k) for k in value
    ):
        raise ConfigError(
            f"context 'reserved_concurrency' must map function names to integers, got {value!r}"
        )
    return {name: _int(f"reserved_concurrency.{name}", n, 0, 1, 1000) for name, n in value.items()}


FUNCTION_NAME = re.compile(r"^[a-z]+$")
_KEYS = (
    *_INT_LIMITS, "stage", "log_level", "alarm_email", "cors_origins", "reserved_concurrency"
)
