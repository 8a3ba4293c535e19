"""Lambda cold-start imports: each handler imported as Lambda does (function dir, the
dependency layer, the code layer, the runtime's boto3) under CPython 3.13, timed with
``python -X importtime``. Printed, never asserted.

Beside each handler's total it prints the slowest imports at the first level, the places
where a lazy import would pay. (rich left the layer for the ``cli`` extra; httpx imports
its CLI, and rich with it, only where click is importable too, which the layer never was,
so that move shrinks the layer, not the cold start.)

    python -m bench.coldstart [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "layers" / "deps" / "requirements.txt"
CODE_LAYER = ROOT / "layers" / "common" / "python"


def python_313() -> str:
    pyenv = Path.home() / ".pyenv" / "versions" / "3.13.0" / "bin" / "python3.13"
    found = str(pyenv) if pyenv.exists() else shutil.which("python3.13")
    if not found:
        raise SystemExit("needs a CPython 3.13 interpreter (Lambda's runtime) on PATH")
    return found


def pip_target(target: Path, *specs: str, platform: bool = True) -> None:
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               "--no-compile", "--target", str(target), *specs]
    if platform:
        command += ["--platform", "manylinux2014_x86_64", "--implementation", "cp",
                    "--python-version", "3.13", "--only-binary=:all:"]
    subprocess.run(command, check=True, stderr=subprocess.DEVNULL)


def import_profile(python: str, function: str, path: str) -> tuple[float, int, list[str]]:
    """One cold handler import: total ms, modules imported, the slowest first-level imports."""
    done = subprocess.run(
        [python, "-I", "-X", "importtime", "-c",
         "import sys; sys.path[:0] = ['.', *sys.argv[1].split(':')]; import handler", path],
        cwd=ROOT / "functions" / function, capture_output=True, text=True, check=True,
        env={"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1"},
    )
    rows = [line.split("|") for line in done.stderr.splitlines() if "|" in line][1:]
    # Top-level names carry one leading space; what they import is indented two more.
    total_us = sum(int(row[1]) for row in rows if not row[2][1:2].isspace())
    first_level = [(int(row[1]), row[2].strip()) for row in rows
                   if row[2].startswith("   ") and not row[2][3:4].isspace()]
    slowest = [f"{name} {us / 1000:.0f} ms" for us, name in sorted(first_level)[-4:][::-1]]
    return total_us / 1000, len(rows), slowest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    python = python_313()
    functions = sorted(p.name for p in (ROOT / "functions").iterdir() if p.is_dir())
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        pip_target(base / "layer", "-r", str(REQUIREMENTS))
        pip_target(base / "runtime", f"boto3=={version('boto3')}", platform=False)
        path = f"{base / 'layer'}:{CODE_LAYER}:{base / 'runtime'}"
        for function in functions:
            runs = [import_profile(python, function, path) for _ in range(args.repeat)]
            print(json.dumps({
                "handler": function,
                "import_ms_median": round(statistics.median(ms for ms, _, _ in runs), 1),
                "modules": runs[0][1],
                "slowest": runs[0][2],
            }))


if __name__ == "__main__":
    main()
