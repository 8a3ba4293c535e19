"""Real documentation sites nobody here wrote, from Debian's ``*-doc`` packages.

`.ci/run` (and `make fixtures`) installs the packages; a test that needs a site whose
package is missing fails with the command that installs it, rather than skipping. Each
site has a gold file in ``tests/fixtures/gold/<name>.toml`` (the fidelity scorer's
reference, written by reading the site's HTML).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

GOLD = Path(__file__).parent.parent / "fixtures" / "gold"


@dataclass(frozen=True)
class Site:
    name: str
    package: str
    root: Path  # the folder to serve
    start: str  # path of the start page, relative to the served root
    generator: str
    max_pages: int | None = None  # crawl cap for the fidelity tests (big sites)


def _site(name: str, package: str, root: str, start: str, generator: str, cap: int | None = None):
    return Site(name, package, Path(root), start, generator, cap)


_DOC = "/usr/share/doc"
SITES = {
    s.name: s
    for s in (
        _site("requests", "python-requests-doc", f"{_DOC}/python-requests-doc/html",
              "/index.html", "sphinx-alabaster"),
        _site("mkdocs", "mkdocs-doc", f"{_DOC}/mkdocs/html", "/index.html", "mkdocs"),
        _site("flask", "python-flask-doc", f"{_DOC}/python-flask-doc/html", "/index.html",
              "sphinx-pallets"),
        _site("celery", "python-celery-doc", f"{_DOC}/python-celery-doc/html", "/index.html",
              "sphinx-celery", 80),
        _site("cargo", "cargo-doc", f"{_DOC}/cargo/doc", "/proc_macro2/index.html",
              "rustdoc"),
        # mdBook (the Rust book); rust-doc is extract-only (MathJax and fonts)
        _site("rust-book", "rust-doc", f"{_DOC}/rust-doc/html/book", "/index.html", "mdbook", 80),
        _site("commons-lang3", "libcommons-lang3-java-doc", f"{_DOC}/libcommons-lang3-java/api",
              "/index.html", "javadoc", 80),
        _site("git", "git-doc", f"{_DOC}/git-doc", "/git.html", "asciidoc", 80),
        _site("pam", "libpam-doc", f"{_DOC}/libpam-doc/html", "/index.html", "docbook", 100),
        _site("lmdb", "lmdb-doc", f"{_DOC}/lmdb-doc/html", "/index.html", "doxygen"),
        _site("typer", "python-typer-doc", f"{_DOC}/python-typer-doc/html", "/index.html",
              "mkdocs-readthedocs"),
        _site("postgresql", "postgresql-doc-15", f"{_DOC}/postgresql-doc-15/html", "/index.html",
              "docbook", 120),
        _site("python", "python3.11-doc", f"{_DOC}/python3.11/html", "/index.html",
              "sphinx-pydoctheme", 60),
        _site("django", "python-django-doc", f"{_DOC}/python-django-doc/html", "/index.html",
              "sphinx-djangodocs", 80),
        # Generators no rule was written for (issue 8), measured before any rule exists
        # (gtk-doc writes DocBook XSL markup: the DocBook rule matches its pages).
        _site("glib", "libglib2.0-doc", "/usr/share/gtk-doc/html/glib", "/index.html",
              "gtk-doc", 80),
        _site("nodejs", "nodejs-doc", f"{_DOC}/nodejs/api", "/index.html", "nodejs-apidoc", 40),
        _site("aeson", "libghc-aeson-doc", f"{_DOC}/libghc-aeson-doc/html", "/index.html",
              "haddock", 40),
        _site("sbcl", "sbcl-doc", f"{_DOC}/sbcl/sbcl-internals", "/index.html",
              "texinfo"),
    )
}


def require_site(name: str) -> Site:
    site = SITES[name]
    if not (site.root / site.start.lstrip("/")).is_file():
        pytest.fail(f"{site.package} is not installed: run `make fixtures` "
                    f"(apt-get install {site.package}, or see .ci/fixtures.sh)")
    return site
