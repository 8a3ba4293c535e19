"""A conversion worker leaves when the parent that started it is gone, even if that
happened before the worker finished starting (it must not take init for its parent)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

WATCH_A_GONE_PARENT = """
import sys, time
from mdcrawl.runtime.workers import _init_worker
_init_worker(sys.argv[2], int(sys.argv[1]))  # what the pool runs in a new worker
time.sleep(60)
sys.exit(3)  # still here: the watch did not notice
"""


def _run_worker_init(parent: int, root: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", WATCH_A_GONE_PARENT, str(parent), str(root)],
        timeout=90,
        check=False,
    )
    return done.returncode


def test_a_worker_whose_parent_died_before_it_started_leaves(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that is nobody's parent any more
    assert _run_worker_init(gone.pid, tmp_path) == 0
