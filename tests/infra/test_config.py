"""Context validation, the dependency layer's pins, and the two layer assets."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from mdcrawl.options import hosted_caps

from infra.config import ConfigError, Settings

from .conftest import ROOT, SKIP_BUNDLING, STACK, Synth, run_app

REQUIREMENTS = ROOT / "layers" / "deps" / "requirements.txt"
LOCK = ROOT / "layers" / "deps" / "requirements.lock"
# In the layer but not in pyproject's [project].dependencies: the aws extra without boto3
# (the Lambda runtime ships boto3/botocore; see the comment in requirements.txt).
AWS_EXTRA_IN_LAYER = {"aws-lambda-powertools", "aws-xray-sdk", "pydantic-settings"}
AWS_EXTRA_NOT_IN_LAYER = {"boto3", "botocore"}
# In the layer only: wrapt (the X-Ray SDK's dependency), pinned to what tests run with.
LAYER_ONLY = {"wrapt"}


def pins(lines: list[str]) -> dict[str, str]:
    found = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if line:
            name, pinned = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([\w.]+)", line).groups()  # type: ignore[union-attr]
            found[name.lower().replace("_", "-")] = pinned
    return found


def test_layer_requirements_pin_the_same_versions_as_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = pins(project["dependencies"])
    aws = pins(project["optional-dependencies"]["aws"])
    layer = pins(REQUIREMENTS.read_text().splitlines())
    assert set(aws) == AWS_EXTRA_IN_LAYER | AWS_EXTRA_NOT_IN_LAYER
    expected = {**runtime, **{k: v for k, v in aws.items() if k in AWS_EXTRA_IN_LAYER}}
    assert {k: v for k, v in layer.items() if k not in LAYER_ONLY} == expected
    assert {k: layer[k] for k in LAYER_ONLY} == {k: version(k) for k in LAYER_ONLY}


def test_defaults_come_from_cdk_json() -> None:
    s = Settings.from_mapping({})
    assert s.caps == hosted_caps() and s.stage == "prod"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("budget_s", "five", "'budget_s' must be a valid budget_s"),
        ("budget_s", 0.5, "greater than or equal to 1"),
        ("budget_seconds", 300, "'budget_seconds' is now called 'budget_s'"),
        ("max_pages", 0, "'max_pages' must be a valid max_pages"),
        ("max_pages", True, "not true/false"),
        ("concurrency", 1000, "less than or equal to 64"),
        ("retention_days", -1, "'retention_days' must be"),
        ("stage", "Prod!", "'stage' must be"),
        ("log_level", "LOUD", "'log_level' must be"),
        ("alarm_email", "nobody", "'alarm_email' must be"),
        ("cors_origins", "https://x.org", "'cors_origins' must be"),
        ("reserved_concurrency", [5], "'reserved_concurrency' must map function names"),
        ("reserved_concurrency", {"crawler": 0}, "'reserved_concurrency.crawler' must be"),
    ],
)
def test_bad_context_is_rejected_with_a_clear_message(
    key: str, value: object, message: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        Settings.from_mapping({key: value})


def test_cli_style_string_numbers_are_accepted() -> None:
    assert Settings.from_mapping({"max_pages": "50"}).caps["max_pages"] == 50


def test_synth_fails_on_a_bad_context_value(tmp_path: Path) -> None:
    done = run_app(tmp_path, {"aws:cdk:bundling-stacks": [], "max_pages": -5})
    assert done.returncode != 0
    assert "context 'max_pages' must be a valid max_pages: Input should be greater than or equal to 1" in done.stderr


def test_reserved_concurrency_reaches_the_named_functions_only(tmp_path: Path) -> None:
    context = {**SKIP_BUNDLING, "reserved_concurrency": {"processor": 40, "crawler": 16}}
    assert run_app(tmp_path, context).returncode == 0
    template = json.loads((tmp_path / f"{STACK}.template.json").read_text())
    reserved = {
        props["Description"].removeprefix("mdcrawl "): props.get("ReservedConcurrentExecutions")
        for res in template["Resources"].values()
        if res["Type"] == "AWS::Lambda::Function"
        and (props := res["Properties"]).get("Description", "").startswith("mdcrawl ")
    }
    assert reserved == {
        "api": None, "websocket": None, "orchestrator": None, "crawler": 16, "processor": 40
    }
    done = run_app(tmp_path / "bad", {**SKIP_BUNDLING, "reserved_concurrency": {"crawlr": 5}})
    assert done.returncode != 0 and "unknown functions ['crawlr']" in done.stderr


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
        LOCK, RUNTIME.name.removeprefix("python"), PLATFORMS[ARCHITECTURE.name]
    )
    assert bundler.try_bundle(str(tmp_path), image=None) is True
    layer = tmp_path / "python"
    (lxml_so,) = layer.glob("lxml/etree.cpython-313-aarch64-linux-gnu.so")
    assert lxml_so.is_file()
    assert list(layer.glob("pydantic_core/_pydantic_core.cpython-313-aarch64-linux-gnu.so"))
    assert not (layer / "bin").exists() and not list(layer.rglob("__pycache__"))
    assert (layer / "aws_xray_sdk").is_dir()
    for provided in ("boto3", "botocore", "s3transfer", "urllib3", "dateutil"):
        assert not (layer / provided).exists(), provided


_PYENV_313 = Path.home() / ".pyenv" / "versions" / "3.13.0" / "bin" / "python3.13"
PYTHON_313 = str(_PYENV_313) if _PYENV_313.exists() else (shutil.which("python3.13") or "")


@pytest.mark.infra
def test_every_handler_imports_with_only_the_layers_and_the_runtime_boto3(tmp_path: Path) -> None:
    """What Lambda does at cold start: function dir, then the layers, then the runtime's
    boto3. An x86_64 build of the same layer, so this machine's CPython 3.13 can load it."""
    if not PYTHON_313:  # Lambda's runtime: without it this proves nothing, so it fails
        pytest.fail("needs a CPython 3.13 interpreter on PATH (e.g. `pyenv install 3.13`)")
    from infra.bundling import PipLayerBundler
    from infra.pipeline import FUNCTIONS

    PipLayerBundler(LOCK, "3.13", "manylinux2014_x86_64").try_bundle(
        str(tmp_path / "deps"), image=None
    )
    runtime = tmp_path / "runtime"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
            str(runtime),
            f"boto3=={version('boto3')}",
        ],
        capture_output=True,
        check=True,
    )
    path = f"{tmp_path / 'deps' / 'python'}:{ROOT / 'layers' / 'common' / 'python'}:{runtime}"
    for name in FUNCTIONS:
        done = subprocess.run(
            [
                PYTHON_313,
                "-I",
                "-c",
                "import sys; sys.path[:0] = ['.', *sys.argv[1].split(':')];"
                " import handler; assert callable(handler.lambda_handler)",
                path,
            ],
            cwd=ROOT / "functions" / name,
            capture_output=True,
            text=True,
            check=False,
            env={"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1"},
        )
        assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
