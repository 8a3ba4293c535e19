"""The dependency layer is built from layers/deps/requirements.lock: every package of the
closure pinned with its hashes, resolved from requirements.txt (whose pins agree with
pyproject.toml, test_config.py) for the Lambda runtime, installed with --require-hashes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from infra.bundling import LOCK, PipLayerBundler
from infra.pipeline import ARCHITECTURE, RUNTIME

from .conftest import ROOT
from .test_config import REQUIREMENTS, pins

DEPS = ROOT / "layers" / "deps"
ENTRY = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+)((?:\s*\\\n\s+--hash=sha256:[0-9a-f]{64})+)", re.M)


def locked(text: str) -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes) for every entry of a lock file."""
    return {
        m.group(1).lower().replace("_", "-"): (m.group(2), m.group(3).count("--hash="))
        for m in ENTRY.finditer(text)
    }


def test_every_locked_package_is_pinned_with_hashes() -> None:
    text = (DEPS / LOCK).read_text()
    entries = locked(text)
    names = re.findall(r"^([A-Za-z0-9_.\-]+)==", text, re.M)
    assert len(entries) == len(names) > 10  # no entry without a hash
    assert all(count >= 1 for _, count in entries.values())


def test_the_lock_holds_the_requirements_pins() -> None:
    entries = locked((DEPS / LOCK).read_text())
    wanted = pins(REQUIREMENTS.read_text().splitlines())
    assert {name: entries[name][0] for name in wanted if name in entries} == wanted
    assert set(wanted) <= set(entries)


def test_the_lock_is_resolved_for_the_stacks_runtime() -> None:
    makefile = (ROOT / "Makefile").read_text()
    python = re.search(r"^LAMBDA_PYTHON\s*:=\s*(\S+)", makefile, re.M).group(1)  # type: ignore[union-attr]
    platform = re.search(r"^LAMBDA_PLATFORM\s*:=\s*(\S+)", makefile, re.M).group(1)  # type: ignore[union-attr]
    assert f"python{python}" == RUNTIME.name
    assert platform.startswith({"arm64": "aarch64", "x86_64": "x86_64"}[ARCHITECTURE.name])


def test_a_hash_that_does_not_match_fails_the_build(tmp_path: Path) -> None:
    """--require-hashes is in force: a lock whose hash differs from the downloaded file
    (a republished or tampered release) stops the build."""
    text = (DEPS / LOCK).read_text()
    entry = next(m for m in ENTRY.finditer(text) if m.group(1) == "sniffio")
    tampered = re.sub(r"sha256:[0-9a-f]{64}", "sha256:" + "0" * 64, entry.group(0))
    lock = tmp_path / LOCK
    lock.write_text(f"{tampered}\n")
    bundler = PipLayerBundler(lock, "3.13", "manylinux2014_x86_64")
    with pytest.raises(RuntimeError, match="(?i)hash"):
        bundler.try_bundle(str(tmp_path / "out"), image=None)
