"""Real documentation sites nobody here wrote, from Debian's ``*-doc`` packages.

`.ci/run` (and `make fixtures`) installs the packages; a test that needs a site whose
package is missing fails with the command that installs it, rather than skipping.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Site:
    name: str
    package: str
    root: Path  # the folder to serve
    start: str  # path of the start page, relative to the served root
    generator: str


SITES = {
    "requests": Site(
        "requests", "python-requests-doc", Path("/usr/share/doc/python-requests-doc/html"),
        "/index.html", "sphinx-alabaster",
    ),
    "mkdocs": Site(
        "mkdocs", "mkdocs-doc", Path("/usr/share/doc/mkdocs/html"), "/index.html", "mkdocs",
    ),
    "flask": Site(
        "flask", "python-flask-doc", Path("/usr/share/doc/python-flask-doc/html"),
        "/index.html", "sphinx-pallets",
    ),
    "celery": Site(
        "celery", "python-celery-doc", Path("/usr/share/doc/python-celery-doc/html"),
        "/index.html", "sphinx-celery",
    ),
    "cargo": Site(
        "cargo", "cargo-doc", Path("/usr/share/doc/cargo/doc"), "/proc_macro2/index.html", "rustdoc",
    ),
}


def require_site(name: str) -> Site:
    site = SITES[name]
    if not (site.root / site.start.lstrip("/")).is_file():
        pytest.fail(f"{site.package} is not installed: run `make fixtures` "
                    f"(apt-get install {site.package})")
    return site
