"""The conversion workers are forked by a forkserver that has loaded the converter once:
a worker neither runs the parent's main script again (the ``mdcrawl`` console script
imports the whole CLI) nor imports the converter itself, and it leaves with its parent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MAIN = """
import json, sys
from pathlib import Path
import mdcrawl.cli  # what the console script imports, before anything else
from mdcrawl.runtime.workers import process_pool, start_workers
from tests.support import probes

if __name__ == "__main__":
    start_workers().result(timeout=120)
    pool = process_pool(Path(sys.argv[1]))
    asked = ["mdcrawl.cli", "mdcrawl.convert", "readability"]
    print(json.dumps({m: pool.submit(probes.loaded, m).result(timeout=120) for m in asked}))
    pool.shutdown()
"""


def test_a_worker_has_the_converter_loaded_and_not_the_parents_main_script(
    tmp_path: Path,
) -> None:
    script = tmp_path / "main_script.py"  # a __main__ with a file, as the console script
    script.write_text(MAIN)
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
        env={"PYTHONPATH": str(root)},
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == {"mdcrawl.cli": False, "mdcrawl.convert": True, "readability": True}
