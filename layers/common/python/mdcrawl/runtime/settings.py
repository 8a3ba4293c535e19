"""What the Lambda functions read from their environment (set by infra/pipeline.py).

pydantic-settings over the names of ``names.EnvVar`` (``MDCRAWL_`` + the field's name),
plus one variable per capped crawl option (``names.cap_env``: ``MDCRAWL_MAX_PAGES``,
``MDCRAWL_BUDGET_S``...), whose type, bounds and default (the hosted cap) are the
option's own in ``options.py``: a new capped option is read here without a line changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import Field, ValidationError, create_model, field_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, NoDecode, SettingsConfigDict

from ..names import ENV_PREFIX, TABLE_ENV, Table
from ..options import CrawlOptionsModel, Knob, Model, OptionLimits, Profile, hosted_caps
from ..service.models import ServiceLimits


class MappingEnvSource(EnvSettingsSource):
    """The env source over a given mapping, not ``os.environ``: tests run the settings of
    several functions in one process (pydantic-settings' dotenv source does the same)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # Names are case-insensitive (the default); a blank value counts as unset.
        return {k.lower(): v for k, v in self._environ.items() if v.strip()}


class BaseAwsSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, str_strip_whitespace=True, frozen=True, extra="ignore"
    )

    jobs_table: str
    frontier_table: str
    cache_table: str
    pages_table: str
    events_table: str
    connections_table: str
    bucket: str
    crawler_function: str = ""
    processor_function: str = ""
    state_machine_arn: str = ""
    websocket_endpoint: str = ""
    usage_plan_id: str = ""
    event_bus: str = ""
    # Hosts/CIDRs the crawler may reach despite the SSRF guard, comma-separated.
    allow_networks: Annotated[tuple[str, ...], NoDecode] = ()
    retention_days: float = Field(default=7.0, gt=0)
    # How long a cache entry outlives its freshness (its validators still make the next
    # fetch a conditional GET); S3 expires cache/ objects after the same number of days.
    cache_retention_days: float = Field(default=30.0, gt=0)

    @field_validator("allow_networks", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: Any, init_settings: Any, **_sources: Any
    ) -> tuple[Any, ...]:
        return (init_settings,)  # ``from_env`` reads the environment it is given, only it

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Any:
        try:
            return cls(**MappingEnvSource(cls, environ)())
        except ValidationError as exc:
            missing = [_env_name(e["loc"]) for e in exc.errors() if e["type"] == "missing"]
            if missing:
                raise RuntimeError(f"environment variables not set: {', '.join(missing)}") from None
            raise RuntimeError(f"invalid settings in the environment: {exc}") from None

    @property
    def tables(self) -> dict[Table, str]:
        return {table: getattr(self, f"{table.value}_table") for table in TABLE_ENV}

    def require(self, name: str) -> str:
        value = getattr(self, name)
        if not value:
            raise RuntimeError(f"setting {name!r} is not configured for this function")
        return str(value)

    @property
    def limits(self) -> ServiceLimits:
        caps = {name: getattr(self, name) for name in hosted_caps(self.options_model)}
        return ServiceLimits(OptionLimits.of(Profile.HOSTED, **caps))

    options_model: ClassVar[Model] = CrawlOptionsModel  # whose caps are fields here


def _env_name(loc: tuple[Any, ...]) -> str:
    return f"{ENV_PREFIX}{str(loc[0]).upper()}"


def settings_class(model: Model = CrawlOptionsModel) -> type[BaseAwsSettings]:
    """The settings with one field per capped option of ``model``."""
    caps = hosted_caps(model)
    fields: dict[str, Any] = {}
    for name, cap in caps.items():
        info = model.model_fields[name]
        constraints = [m for m in info.metadata if not isinstance(m, Knob)]
        fields[name] = (Annotated[info.annotation, *constraints], cap)  # type: ignore[valid-type]
    made = create_model("AwsSettings", __base__=BaseAwsSettings, **fields)
    made.options_model = model
    return made


AwsSettings = settings_class()
