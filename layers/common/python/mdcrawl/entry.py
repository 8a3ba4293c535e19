"""The `mdcrawl` console script: `cli.main`, started for less.

Every command pays for its imports before it does anything: ~0.3 s, a third of a
re-crawl of an unchanged site. Three costs in them buy the command nothing:

- the cyclic garbage collector runs its full passes over everything the imports made
  so far, several times, though all of it lives as long as the process (~30 ms);
- httpx imports its own command line (``httpx._main``: click, pygments, rich's syntax
  highlighting) whenever click is installed, as it is beside ``mdcrawl[serve]``
  (~35 ms); mdcrawl never runs httpx's command line;
- pydantic scans every installed distribution's entry points for plugins when the first
  model is built (~10 ms, more in a larger environment).

Only the console script does this: a program importing mdcrawl as a library keeps its
collector, its httpx and its pydantic plugins as they were.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence

# httpx's ``from ._main import main`` falls back to a stub on ImportError, which a None
# in sys.modules raises (the import system's documented way to block one module).
_HTTPX_CLI = "httpx._main"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (``argv``: the process's own when None)."""
    prepare_imports()
    gc.disable()
    try:
        from .cli import main as run_command
    finally:
        # What the imports made is kept out of every later collection, then the
        # collector runs as usual for what the command itself makes.
        gc.freeze()
        gc.enable()
    return run_command(argv)


def prepare_imports() -> None:
    """Leave httpx's command line and pydantic's plugin scan out of this process, unless
    they were already loaded or the user chose otherwise (``PYDANTIC_DISABLE_PLUGINS``)."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault(_HTTPX_CLI, None)  # type: ignore[arg-type]
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


if __name__ == "__main__":
    sys.exit(main())
