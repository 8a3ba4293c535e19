"""One synthesized template for every infra test: ``python app.py`` runs once per session
in a subprocess (the same command CI and `make synth` run), with the context that skips
the dependency layer's pip bundling, into a temporary cdk.out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
STACK = "Mdcrawl"
SKIP_BUNDLING = {"aws:cdk:bundling-stacks": []}


def synth_env(outdir: Path, context: dict[str, Any]) -> dict[str, str]:
    return {
        **os.environ,
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "CDK_OUTDIR": str(outdir),
        "CDK_CONTEXT_JSON": json.dumps(context),
    }


def run_app(outdir: Path, context: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "app.py"],
        cwd=ROOT,
        env=synth_env(outdir, context),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@dataclass
class Synth:
    outdir: Path
    template: dict[str, Any]
    report: dict[str, Any]
    metadata: dict[str, Any]

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return self.template["Resources"]

    def of_type(self, cfn_type: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.resources.items() if v["Type"] == cfn_type}

    def props(self, logical_id: str) -> dict[str, Any]:
        return self.resources[logical_id].get("Properties", {})


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synth]:
    outdir = tmp_path_factory.mktemp("cdk.out")
    done = run_app(outdir, SKIP_BUNDLING)
    assert done.returncode == 0, (
        f"python app.py failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    read = lambda name: json.loads((outdir / name).read_text())  # noqa: E731
    yield Synth(
        outdir=outdir,
        template=read(f"{STACK}.template.json"),
        report=read("validation-report.json"),
        metadata=read(f"{STACK}.metadata.json"),
    )
