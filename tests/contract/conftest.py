"""Contract tests: one suite per storage port, run against every adapter registered.

Registry shape. Each factories module in this folder (``local_factories.py`` here,
``aws_factories.py`` when it exists and imports) exposes

    FACTORIES: dict[str, dict[str, Factory]]   # port -> {adapter name -> factory}

and/or, per port, a module attribute ``<port>_factories: dict[str, Factory]``
(e.g. ``jobstore_factories = {"dynamodb-moto": make_jobstore}``). Both shapes are
merged, so a new module adds adapters to any port without editing another file.

Ports: ``jobstore, frontier, cache, blobs, pages, events, connections``: each is also
the name of the fixture a suite asks for, parametrized over the registered adapters
(test ids read ``test_x[sqlite]``, ``test_x[dynamodb-moto]``).

A ``Factory`` is a callable ``factory(tmp_path: Path) -> AbstractContextManager[adapter]``:
it builds a fresh, empty adapter (using ``tmp_path`` for files if it needs any), yields
it, and cleans up on exit. ``contextlib.contextmanager`` generators fit.

Tests marked ``@pytest.mark.concurrent`` call one adapter from several threads at
once. A module may list adapter names whose backend is not thread-safe (moto's
in-memory backends check conditions and write without a lock) in
``NOT_THREAD_SAFE: set[str]``: those tests are skipped for them, and the concurrency
contract is held by the other adapters of the port (e.g. DynamoDB Local).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

Factory = Callable[[Path], AbstractContextManager[Any]]

PORTS = ("jobstore", "frontier", "cache", "blobs", "pages", "events", "connections")
FACTORY_MODULES = ("local_factories", "aws_factories")


def _factory_modules() -> list[ModuleType]:
    """The registered modules that exist and whose third-party needs are installed
    (the AWS ones need boto3 and moto). A broken import of our own code still fails."""
    modules = []
    for name in FACTORY_MODULES:
        try:
            modules.append(importlib.import_module(f"{__package__}.{name}"))
        except ModuleNotFoundError as exc:
            if not _absent_or_third_party(exc, name):
                raise
    return modules


def _absent_or_third_party(exc: ModuleNotFoundError, name: str) -> bool:
    missing = exc.name or ""
    ours = missing.split(".")[0] in ("mdcrawl", "tests")
    return missing == f"{__package__}.{name}" or not ours


def factories_for(port: str) -> dict[str, Factory]:
    found: dict[str, Factory] = {}
    for module in _factory_modules():
        found.update(getattr(module, "FACTORIES", {}).get(port, {}))
        found.update(getattr(module, f"{port}_factories", {}))
    return found


def not_thread_safe() -> set[str]:
    modules = _factory_modules()
    return {name for module in modules for name in getattr(module, "NOT_THREAD_SAFE", ())}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "concurrent: calls one adapter from several threads")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for port in PORTS:
        if port in metafunc.fixturenames:
            factories = factories_for(port)
            metafunc.parametrize(port, list(factories.items()), ids=list(factories), indirect=True)


def _open(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    name, factory = request.param
    if request.node.get_closest_marker("concurrent") and name in not_thread_safe():
        pytest.skip(f"{name} is not thread-safe; other adapters hold the concurrency contract")
    with factory(tmp_path) as adapter:
        yield adapter


@pytest.fixture
def jobstore(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from _open(request, tmp_path)


@pytest.fixture
def frontier(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from _open(request, tmp_path)


@pytest.fixture
def cache(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from _open(request, tmp_path)


@pytest.fixture
def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from _open(request, tmp_path)


@pytest.fixture
def pages(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from _open(request, tmp_path)


@pytest.fixture
def events(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from _open(request, tmp_path)


@pytest.fixture
def connections(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from _open(request, tmp_path)
