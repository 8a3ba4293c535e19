"""Context validation, the dependency layer's pins, and the two layer assets."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from infra.config import ConfigError, Settings

from .conftest import ROOT, Synth, run_app

REQUIREMENTS = ROOT / "layers" / "deps" / "requirements.txt"
# In the layer but not in pyproject's [project].dependencies: the aws extra without boto3
# (the Lambda runtime ships boto3/botocore; see the comment in requirements.txt).
AWS_EXTRA_IN_LAYER = {"aws-lambda-powertools"}
AWS_EXTRA_NOT_IN_LAYER = {"boto3"}


def pins(lines: list[str]) -> dict[str, str]:
    found = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if line:
            name, version = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([\w.]+)", line).groups()  # type: ignore[union-attr]
            found[name.lower().replace("_", "-")] = version
    return found


def test_layer_requirements_pin_the_same_versions_as_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = pins(project["dependencies"])
    aws = pins(project["optional-dependencies"]["aws"])
    layer = pins(REQUIREMENTS.read_text().splitlines())
    assert set(aws) == AWS_EXTRA_IN_LAYER | AWS_EXTRA_NOT_IN_LAYER
    expected = {**runtime, **{k: v for k, v in aws.items() if k in AWS_EXTRA_IN_LAYER}}
    assert layer == expected


def test_defaults_come_from_cdk_json() -> None:
    s = Settings.from_mapping({})
    assert (s.budget_seconds, s.max_pages, s.stage) == (300, 2000, "prod")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("budget_seconds", "five", "'budget_seconds' must be an integer"),
        ("budget_seconds", 10, "'budget_seconds' must be between 60 and 3600"),
        ("max_pages", 0, "'max_pages' must be between"),
        ("max_pages", True, "'max_pages' must be an integer"),
        ("concurrency", 1000, "'concurrency' must be between"),
        ("retention_days", -1, "'retention_days' must be"),
        ("stage", "Prod!", "'stage' must be"),
        ("log_level", "LOUD", "'log_level' must be"),
        ("alarm_email", "nobody", "'alarm_email' must be"),
        ("cors_origins", "https://x.org", "'cors_origins' must be"),
    ],
)
def test_bad_context_is_rejected_with_a_clear_message(
    key: str, value: object, message: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        Settings.from_mapping({key: value})


def test_cli_style_string_numbers_are_accepted() -> None:
    assert Settings.from_mapping({"max_pages": "50"}).max_pages == 50


def test_synth_fails_on_a_bad_context_value(tmp_path: Path) -> None:
    done = run_app(tmp_path, {"aws:cdk:bundling-stacks": [], "max_pages": -5})
    assert done.returncode != 0
    assert "context 'max_pages' must be between 1 and 100000, got -5" in done.stderr


def _layer_asset(synth: Synth, description_start: str) -> Path:
    for res in synth.of_type("AWS::Lambda::LayerVersion").values():
        if res["Properties"]["Description"].startswith(description_start):
            key = res["Properties"]["Content"]["S3Key"]  # "<asset hash>.zip"
            return synth.outdir / f"asset.{key.removesuffix('.zip')}"
    raise AssertionError(description_start)


def test_code_layer_has_python_mdcrawl_at_its_root_and_no_bytecode(synth: Synth) -> None:
    asset = _layer_asset(synth, "mdcrawl library")
    assert (asset / "python" / "mdcrawl" / "names.py").is_file()
    assert sorted(p.name for p in asset.iterdir()) == ["python"]
    assert not list(asset.rglob("__pycache__")) and not list(asset.rglob("*.egg-info"))


@pytest.mark.infra
def test_dependency_layer_bundles_aarch64_wheels_without_docker(tmp_path: Path) -> None:
    """The real bundler (pip from the registry, ~5-20 s): compiled wheels for the Lambda
    platform, no console scripts, no bytecode."""
    from infra.bundling import PLATFORMS, PipLayerBundler
    from infra.pipeline import ARCHITECTURE, RUNTIME

    bundler = PipLayerBundler(
        REQUIREMENTS, RUNTIME.name.removeprefix("python"), PLATFORMS[ARCHITECTURE.name]
    )
    assert bundler.try_bundle(str(tmp_path), image=None) is True
    layer = tmp_path / "python"
    (lxml_so,) = layer.glob("lxml/etree.cpython-313-aarch64-linux-gnu.so")
    assert lxml_so.is_file()
    assert list(layer.glob("pydantic_core/_pydantic_core.cpython-313-aarch64-linux-gnu.so"))
    assert not (layer / "bin").exists() and not list(layer.rglob("__pycache__"))
    assert not (layer / "boto3").exists()
