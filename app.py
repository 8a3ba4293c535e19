#!/usr/bin/env python3
"""CDK app: the mdcrawl stack, checked by cdk-nag's AwsSolutions pack at synth.

`python app.py` (or `make synth`) writes cdk.out/; `cdk.json`'s context holds the
limits a team tunes, and `cdk ... -c key=value` overrides them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
try:
    import mdcrawl  # noqa: F401  (installed editable by `make setup`)
except ImportError:  # a bare checkout: the library is the code layer's folder
    sys.path.insert(0, str(ROOT / "layers" / "common" / "python"))

import aws_cdk as cdk  # noqa: E402

from infra.asl import STACK_NAME  # noqa: E402
from infra.nag import add_checks  # noqa: E402
from infra.stack import MdcrawlStack  # noqa: E402


def cdk_json_context() -> dict[str, object]:
    """cdk.json's context, for `python app.py` run without the CDK CLI (the CLI passes
    it itself, and its values, like `-c` ones, take precedence over these)."""
    return json.loads((ROOT / "cdk.json").read_text()).get("context", {})


def build(
    context: dict[str, object] | None = None, *, nag: bool = True
) -> tuple[cdk.App, MdcrawlStack]:
    app = cdk.App(
        context={**cdk_json_context(), **(context or {})},
        outdir=os.environ.get("CDK_OUTDIR", str(ROOT / "cdk.out")),
    )
    stack = MdcrawlStack(
        app,
        STACK_NAME,
        description="mdcrawl: documentation sites to LLM-ready markdown",
        env=cdk.Environment(
            account=os.environ.get("CDK_DEFAULT_ACCOUNT"),
            region=os.environ.get("CDK_DEFAULT_REGION"),
        ),
    )
    cdk.Tags.of(stack).add("project", "mdcrawl")
    if nag:
        add_checks(app)
    return app, stack


if __name__ == "__main__":
    build()[0].synth()
