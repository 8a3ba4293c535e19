"""Each Lambda handler loads only what its function needs (cold starts: a container runs
one function). Imported in a fresh interpreter, as Lambda does: the function's folder
and the code layer on the path. The times are in ``python -m bench.coldstart``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CODE_LAYER = ROOT / "layers" / "common" / "python"
CONVERTER = {"mdcrawl.convert", "markdownify", "readability"}  # lxml: links need it too
PARSER = {"lxml.html"}
HTTP = {"httpx", "httpcore", "mdcrawl.fetch"}
ASSEMBLY = {"mdcrawl.assemble", "mdcrawl.pipeline.finalize"}
# What each function must not load at import.
NOT_NEEDED = {
    "api": CONVERTER | PARSER | ASSEMBLY | HTTP,  # seeding imports the fetcher when a job is created
    "websocket": CONVERTER | PARSER | ASSEMBLY | HTTP | {"mdcrawl.service.rest"},
    "crawler": CONVERTER | ASSEMBLY | {"mdcrawl.service.rest"},
    "processor": HTTP | ASSEMBLY | {"mdcrawl.service.rest"},
    "orchestrator": CONVERTER | ASSEMBLY | HTTP | {"mdcrawl.service.rest"},
    "finalizer": HTTP | {"mdcrawl.service.rest"},
    "fanout": CONVERTER | PARSER | ASSEMBLY | HTTP | {"mdcrawl.service.rest"},
}


def imported_modules(function: str) -> set[str]:
    code = (
        "import sys, json; sys.path[:0] = ['.', sys.argv[1]]; import handler; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(CODE_LAYER)],
        cwd=ROOT / "functions" / function, capture_output=True, text=True, check=True,
        env={"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1"},
    )
    return set(json.loads(done.stdout))


@pytest.mark.parametrize("function", sorted(NOT_NEEDED))
def test_a_handler_imports_only_its_own_function(function: str) -> None:
    loaded = imported_modules(function)
    assert "mdcrawl.runtime.aws" in loaded  # the probe sees the handler's imports
    assert NOT_NEEDED[function] & loaded == set()
