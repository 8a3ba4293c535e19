"""Lambda layer assets built on this machine, without Docker.

The dependency layer is ``pip install --require-hashes --target python/`` of
``layers/deps/requirements.lock`` (every package pinned with its hashes; ``make lock``
resolves it from requirements.txt for the Lambda platform) for the Lambda platform
(manylinux2014 wheels of the runtime's CPython, ``--only-binary``: nothing compiles
here): a deploy installs the very files that were resolved and tested. CDK calls
:meth:`PipLayerBundler.try_bundle`; it returns True, so CDK never
falls back to the Docker image named in ``BundlingOptions``.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_

# Distributions the Lambda Python runtime ships (boto3 and what botocore depends on).
# A copy in the layer would shadow the runtime's (/opt/python comes first on sys.path)
# and could pair a layer botocore with the runtime's boto3; they are removed after pip.
RUNTIME_PROVIDED = frozenset({"boto3", "botocore", "s3transfer", "urllib3", "python-dateutil"})

LOCK = "requirements.lock"  # in layers/deps/, beside the requirements.txt it resolves
PLATFORMS = {
    lambda_.Architecture.ARM_64.name: "manylinux2014_aarch64",
    lambda_.Architecture.X86_64.name: "manylinux2014_x86_64",
}


@jsii.implements(cdk.ILocalBundling)
class PipLayerBundler:
    def __init__(self, requirements: Path, python_version: str, platform: str) -> None:
        self.requirements = requirements.resolve()
        self.python_version = python_version
        self.platform = platform

    def try_bundle(self, output_dir: str, *, image: object, **_options: object) -> bool:
        target = Path(output_dir) / "python"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-compile",
                "--require-hashes",
                "-r",
                str(self.requirements),
                "--target",
                str(target),
                "--platform",
                self.platform,
                "--implementation",
                "cp",
                "--python-version",
                self.python_version,
                "--only-binary=:all:",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"building the dependency layer failed:\n{done.stderr}")
        prune_distributions(target, RUNTIME_PROVIDED)
        # Console scripts are useless in a layer; bytecode is built for the wrong Python.
        shutil.rmtree(target / "bin", ignore_errors=True)
        for cache in target.rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)
        return True


def prune_distributions(target: Path, names: frozenset[str]) -> list[str]:
    """Delete the files (per their RECORD) of the named distributions under ``target``."""
    removed = []
    for dist in importlib.metadata.distributions(path=[str(target)]):
        name = dist.metadata["Name"].lower().replace("_", "-")
        if name not in names:
            continue
        for file in dist.files or ():
            path = (target / file).resolve()
            if path.is_relative_to(target.resolve()) and path.is_file():
                path.unlink()
        removed.append(name)
    for empty in sorted(target.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if empty.is_dir() and not any(empty.iterdir()):
            empty.rmdir()
    return sorted(removed)


def dependency_layer_code(
    requirements_dir: Path, runtime: lambda_.Runtime, architecture: lambda_.Architecture
) -> lambda_.Code:
    """The dependency layer: re-bundled only when the folder (the lock) changes."""
    python_version = runtime.name.removeprefix("python")
    bundler = PipLayerBundler(requirements_dir / LOCK, python_version, PLATFORMS[architecture.name])
    return lambda_.Code.from_asset(
        str(requirements_dir),
        asset_hash_type=cdk.AssetHashType.SOURCE,
        bundling=cdk.BundlingOptions(image=runtime.bundling_image, local=bundler),
    )


def code_layer_code(common_dir: Path) -> lambda_.Code:
    """The library as-is: the asset root is ``layers/common``, so the zip holds
    ``python/mdcrawl/...`` where Lambda looks for layer packages."""
    return lambda_.Code.from_asset(
        str(common_dir), exclude=["**/__pycache__", "**/*.pyc", "**/*.egg-info"]
    )


def main(out_dir: str) -> None:
    """``make layer``: the dependency layer as the stack deploys it, into ``out_dir``."""
    from .pipeline import ARCHITECTURE, RUNTIME

    root = Path(__file__).resolve().parents[1] / "layers" / "deps"
    python_version = RUNTIME.name.removeprefix("python")
    bundler = PipLayerBundler(root / LOCK, python_version, PLATFORMS[ARCHITECTURE.name])
    bundler.try_bundle(out_dir, image=None)
    print(f"{out_dir}/python: the dependency layer ({python_version}, {ARCHITECTURE.name})")


if __name__ == "__main__":
    main(sys.argv[1])
