"""The console script (`mdcrawl.entry`) starts the command line for less: httpx's own
command line and pydantic's plugin scan stay unloaded, the collector is back on and the
imports frozen once the command runs. Each case runs in a fresh interpreter, as the
console script does."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import contextlib, gc, io, json, os, sys
from mdcrawl import entry
with contextlib.redirect_stdout(io.StringIO()):
    code = entry.main(["crawl", "--help"])
import httpx
print(json.dumps({
    "code": code,
    "gc_enabled": gc.isenabled(),
    "frozen": gc.get_freeze_count(),
    "modules": sorted(m for m in sys.modules if sys.modules[m] is not None),
    "httpx_cli": httpx.main.__module__,
    "plugins": os.environ.get("PYDANTIC_DISABLE_PLUGINS"),
}))
"""


def probe(**env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**environ, **env},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_collector_is_back_on_and_the_imports_frozen() -> None:
    seen = probe()
    assert seen["code"] == 0
    assert seen["gc_enabled"] is True
    assert seen["frozen"] > 10_000  # the command line's imports, out of every collection


def test_httpx_command_line_is_not_imported() -> None:
    seen = probe()
    assert "mdcrawl.runtime.local" in seen["modules"]  # the crawl's modules are there
    assert {"click", "pygments", "rich.syntax"} & set(seen["modules"]) == set()
    assert seen["httpx_cli"] == "httpx"  # httpx's own stand-in for a missing CLI


def test_pydantic_plugins_are_off_unless_the_user_chose() -> None:
    assert probe()["plugins"] == "__all__"
    assert probe(PYDANTIC_DISABLE_PLUGINS="")["plugins"] == ""
