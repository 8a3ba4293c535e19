"""Before and after on the same machine: two trees of the library, crawls interleaved.

    git archive <commit> | tar -x -C /tmp/before
    python -m bench.ab --base /tmp/before/layers/common/python [--site django]
                       [--max-pages 250] [--rounds 2]

On a machine shared with other work, wall times swing from run to run by more than any
change worth measuring; CPU time (the crawl's whole process tree, ``bench/proc.py``)
and peak RSS swing much less, and alternating the two trees spreads the load over both.
Each round crawls the site fresh, then runs the same command again (the cached
re-crawl: same output folder), once with the ``--base`` tree first on PYTHONPATH and
once with the installed one. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.crawl import SITES, START
from bench.proc import Measured, measure
from tests.support.server import serve_directory

MDCRAWL = str(Path(sys.executable).with_name("mdcrawl"))


def run(url: str, work: Path, max_pages: int, env: dict[str, str]) -> Measured:
    cmd = [MDCRAWL, "crawl", url, "--out", str(work / "out"), "--cache-dir", str(work / "c")]
    # The budget well past any run: on a loaded machine the default (300 s) cut fresh
    # crawls short, and "again" then crawled the rest.
    cmd += ["--quiet", "--max-pages", str(max_pages), "--concurrency", "8", "--budget", "3000"]
    measured = measure(cmd, env=env, stdout=subprocess.DEVNULL)
    if measured.code != 0:
        raise SystemExit(f"crawl failed with exit {measured.code}: {' '.join(cmd)}")
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="the 'before' library root")
    parser.add_argument("--site", default="django", choices=sorted(SITES))
    parser.add_argument("--max-pages", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    trees = {"before": {**os.environ, "PYTHONPATH": str(args.base)}, "after": dict(os.environ)}
    start = START.get(args.site, "/index.html")
    with serve_directory(SITES[args.site], latency=0.02) as server:
        for round_ in range(args.rounds):
            for name, env in trees.items():
                with tempfile.TemporaryDirectory() as tmp:
                    fresh = run(server.url(start), Path(tmp), args.max_pages, env)
                    again = run(server.url(start), Path(tmp), args.max_pages, env)
                load = Path("/proc/loadavg").read_text().split()[0]
                print(
                    f"{name:<6} round {round_} (load {load}): fresh wall {fresh.wall_s:6.1f} s "
                    f"CPU {fresh.cpu_s:6.2f} s RSS {fresh.peak_rss_mb:4.0f} MB | "
                    f"again wall {again.wall_s:6.1f} s CPU {again.cpu_s:5.2f} s",
                    flush=True,
                )


if __name__ == "__main__":
    main()
