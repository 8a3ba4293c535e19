"""The crawl options, declared once.

``CrawlOptionsModel`` holds every option a person (``mdcrawl crawl`` flags) or a client
(``POST /jobs``) can set: type, bounds, default and help text, and in its ``Knob`` how
the command line spells it and what a service caps. The rest is derived from it:

    cli.py, serve          argparse flags (``add_arguments``), checked as they are parsed
    service/models.py      JobRequest = this model + url + job_id; docs/openapi.yaml's
                           JobRequest and Options (``request_schema``; a test compares)
    runtime/settings.py    the Lambdas' caps: one env var per capped option
    infra/config.py        the caps as CDK context keys, validated at synth
    models.py              ``CrawlOptions``' defaults (``core_defaults``)

Adding an option: one field here, plus its use (a ``CrawlOptions`` attribute the
pipeline reads). A field with ``Knob(cap=...)`` is capped by services, tunable per
deployment; ``Knob(refused_by=...)`` keeps a switch off where a runtime cannot honour it.

Profiles: a crawl on this machine (``LOCAL``) may ask for anything within the bounds;
``serve`` and the AWS stack (``HOSTED``) cap some options, and default them to
min(default, cap), so a request that names nothing is valid everywhere.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo


class Profile(StrEnum):
    LOCAL = "local"  # mdcrawl crawl, the Python API: the machine's owner decides
    SERVE = "serve"  # mdcrawl serve: a service's caps, run by the machine's owner
    HOSTED = "hosted"  # the AWS stack


@dataclass(frozen=True)
class Knob:
    """How an option shows beyond its type and bounds."""

    flag: str = ""  # the CLI flag, when not --name-with-dashes (--no-name: a switch on by default)
    metavar: str = ""
    cap: float | None = None  # the most a service allows unless its deployer says otherwise
    refused_by: frozenset[Profile] = frozenset()  # where asking for a non-default is refused
    core: str = ""  # the CrawlOptions attribute, when it has another name
    negated: bool = False  # that attribute is the opposite switch (no_cache -> use_cache)


MAX_GLOBS = 50
MAX_GLOB_LENGTH = 500
Glob = Annotated[str, Field(min_length=1, max_length=MAX_GLOB_LENGTH)]
DAY_S = 86_400.0


class CrawlOptionsModel(BaseModel):
    """What a person or a client can tune for one crawl."""

    # Strict: "10" is not a page count and true is not 1; unknown fields are a typo.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    max_pages: Annotated[
        int,
        Field(ge=1, le=1_000_000, description="stop discovering after N URLs"),
        Knob(metavar="N", cap=5000),
    ] = 10_000
    max_depth: Annotated[
        int,
        Field(ge=0, le=1000, description="links followed from the start page"),
        Knob(metavar="N", cap=100),
    ] = 50
    budget_s: Annotated[
        float,
        Field(
            ge=1,
            le=7 * DAY_S,
            allow_inf_nan=False,
            description="time budget in seconds; when it ends, what was fetched is "
            "delivered, marked truncated",
        ),
        Knob(flag="--budget", metavar="SECONDS", cap=3600),
    ] = 300.0
    concurrency: Annotated[
        int,
        Field(ge=1, le=64, description="requests in flight per host"),
        Knob(metavar="N", cap=16),
    ] = 8
    include: Annotated[
        tuple[Glob, ...],
        Field(
            max_length=MAX_GLOBS,
            description="only crawl paths matching one of these globs (see scope)",
        ),
        Knob(metavar="GLOB"),
    ] = ()
    exclude: Annotated[
        tuple[Glob, ...],
        Field(max_length=MAX_GLOBS, description="never crawl paths matching these globs"),
        Knob(metavar="GLOB"),
    ] = ()
    max_age_s: Annotated[
        float,
        Field(
            ge=0,
            le=3650 * DAY_S,
            allow_inf_nan=False,
            description="a cached page younger than this (seconds) is not fetched again; "
            "older ones are revalidated",
        ),
        Knob(flag="--max-age", metavar="SECONDS"),
    ] = DAY_S
    no_cache: Annotated[
        bool,
        Field(description="fetch every page again (the cache is still refreshed)"),
        Knob(core="use_cache", negated=True),
    ] = False
    ignore_robots: Annotated[
        bool,
        Field(description="do not honour robots.txt"),
        Knob(core="respect_robots", negated=True, refused_by=frozenset({Profile.HOSTED})),
    ] = False
    generator_rules: Annotated[
        bool,
        Field(
            description="the per-generator rules (selectors.py); without them the site's "
            "learned template and the generic cascade alone find each page's content"
        ),
    ] = True
    max_tokens: Annotated[
        int | None,
        Field(
            ge=200,
            le=100_000_000,
            description="also write docs-001.md... parts of at most N tokens "
            "(estimated: chars / 4)",
        ),
        Knob(metavar="N"),
    ] = None
    # serve and the Lambdas do not fetch markdown twins (runtime/local.py does).
    prefer_native: Annotated[
        bool,
        Field(
            description="use a page's own markdown twin (page.md beside page.html) when the "
            "site has them (probed on the start page; one more request per page)"
        ),
        Knob(refused_by=frozenset({Profile.SERVE, Profile.HOSTED})),
    ] = False


Model = type[BaseModel]


def knob(info: FieldInfo) -> Knob:
    return next((m for m in info.metadata if isinstance(m, Knob)), Knob())


def option_fields(model: Model = CrawlOptionsModel) -> Iterator[tuple[str, FieldInfo]]:
    """The option fields of ``model``: all but those it names in ``not_options`` (a
    JobRequest's url and job_id)."""
    skip = getattr(model, "not_options", ())
    for name, info in model.model_fields.items():
        if name not in skip:
            yield name, info


def value_adapter(info: FieldInfo) -> TypeAdapter[Any]:
    """Validates one value of the option (strings are converted: flags, env, -c key=5)."""
    constraints = [m for m in info.metadata if not isinstance(m, Knob)]
    return TypeAdapter(Annotated[info.annotation, *constraints])  # type: ignore[arg-type]


def check_value(info: FieldInfo, raw: Any) -> Any:
    """The value, converted; ``ValueError`` with pydantic's message when it is not one."""
    if isinstance(raw, bool) and info.annotation is not bool:
        raise ValueError("must be a number, not true/false")
    try:
        return value_adapter(info).validate_python(raw, strict=False)
    except ValidationError as exc:
        raise ValueError("; ".join(e["msg"] for e in exc.errors())) from None


def bounds(info: FieldInfo) -> dict[str, float]:
    """``{"ge": 1, "le": 64}``, as declared on the field."""
    found: dict[str, float] = {}
    for meta in info.metadata:  # annotated_types' Ge, Le, Gt, Lt
        for key in ("ge", "le", "gt", "lt"):
            if getattr(meta, key, None) is not None:
                found[key] = getattr(meta, key)
    return found


def hosted_caps(model: Model = CrawlOptionsModel) -> dict[str, float]:
    """Option -> the most a service allows by default."""
    return {n: k.cap for n, i in option_fields(model) if (k := knob(i)).cap is not None}


def core_name(name: str, info: FieldInfo) -> str:
    return knob(info).core or name


def core_defaults(model: Model = CrawlOptionsModel) -> dict[str, Any]:
    """CrawlOptions attribute -> default, from the model (models.py declares no default)."""
    return {core_name(n, i): _to_core(i, i.default) for n, i in option_fields(model)}


def _to_core(info: FieldInfo, value: Any) -> Any:
    return (not value) if knob(info).negated else value


@dataclass(frozen=True)
class OptionLimits:
    """What one runtime lets a request ask for: a cap per capped option, and the switches
    its profile refuses."""

    profile: Profile = Profile.LOCAL
    caps: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, profile: Profile, **caps: float) -> OptionLimits:
        """The profile's limits: the hosted caps for a service (``caps`` overrides some),
        none for a local crawl."""
        base = {} if profile is Profile.LOCAL else hosted_caps()
        return cls(profile, {**base, **caps})

    def default(self, name: str, model: Model = CrawlOptionsModel) -> Any:
        default = model.model_fields[name].default
        cap = self.caps.get(name)
        return default if cap is None or default is None else min(default, cap)

    def problems(self, given: Mapping[str, Any], model: Model = CrawlOptionsModel) -> list[dict]:
        """field -> message for each given value over its cap or refused here."""
        found = []
        for name, value in given.items():
            info = model.model_fields[name]
            cap = self.caps.get(name)
            if cap is not None and value is not None and value > cap:
                message = f"must be at most {_num(cap)} on this service"
                found.append({"field": name, "message": message})
            if self.profile in knob(info).refused_by and value != info.default:
                found.append({"field": name, "message": "not allowed on this service"})
        return found

    def core_options(self, request: BaseModel) -> dict[str, Any]:
        """CrawlOptions keyword arguments: the values given, else the defaults lowered to
        the caps."""
        given = request.model_fields_set
        out = {}
        for name, info in option_fields(type(request)):
            value = getattr(request, name) if name in given else self.default(name, type(request))
            out[core_name(name, info)] = _to_core(info, value)
        return out


def request_values(core: Mapping[str, Any], model: Model = CrawlOptionsModel) -> dict[str, Any]:
    """A job's CrawlOptions (as a dict) in the shape a client sends them."""
    out = {}
    for name, info in option_fields(model):
        value = core.get(core_name(name, info), info.default)
        value = (not value) if knob(info).negated else value
        out[name] = list(value) if isinstance(value, tuple | list) else value
    return out


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
