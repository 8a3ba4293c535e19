"""The conversion workers are forked by a forkserver that has loaded the converter once:
a worker neither runs the parent's main script again (the ``mdcrawl`` console script
imports the whole CLI) nor imports the converter itself, and it leaves with its parent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from mdcrawl.pipeline import templating

from tests.support.demo import write_site
from tests.support.server import serve_directory

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


def _run_main_script(tmp_path: Path, source: str) -> Any:
    """Run ``source`` as a __main__ with a file (as the console script is) in a fresh
    interpreter; its last line of output, as JSON."""
    script = tmp_path / "main_script.py"
    script.write_text(source)
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
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_worker_has_the_converter_loaded_and_not_the_parents_main_script(
    tmp_path: Path,
) -> None:
    loaded = _run_main_script(tmp_path, MAIN)
    assert loaded == {"mdcrawl.cli": False, "mdcrawl.convert": True, "readability": True}


FROZEN = """
import json, sys
from pathlib import Path
from mdcrawl.runtime.workers import process_pool, start_workers
from tests.support import probes

if __name__ == "__main__":
    start_workers().result(timeout=120)
    pool = process_pool(Path(sys.argv[1]))
    print(json.dumps(pool.submit(probes.frozen_objects).result(timeout=120)))
    pool.shutdown()
"""


def test_a_worker_never_scans_what_the_forkserver_loaded_for_cycles(tmp_path: Path) -> None:
    """The converter's modules and the warm-up's caches are frozen (``gc.freeze``) in
    the forkserver: a worker's full collections do not walk them again and again."""
    assert _run_main_script(tmp_path, FROZEN) > 10_000


# A crawl in a fresh interpreter, as the CLI runs it, counting the pages handed to a
# process step; "two-trips" drops the records the reads answered (every page takes two
# trips, as before reads answered them).
CRAWL = """
import json, sys
from mdcrawl.runtime import workers

if __name__ == "__main__":
    if sys.argv[1] == "two-trips":
        workers._with_record = lambda outcome, read: outcome
    handed = []
    real = workers.LocalInvoker.process
    def counted(self, page):
        handed.append(page.url)
        return real(self, page)
    workers.LocalInvoker.process = counted
    from mdcrawl.cli import main
    code = main(sys.argv[2:])
    print(json.dumps({"code": code, "process_steps": len(handed)}))
"""
# Past the settle window a page a generator rule recognises never waits for the process
# step (it settles no template, no template changes it): whatever the timing, it is
# recorded with its read.
SITE_PAGES = templating.SETTLE_WINDOW + 40


def mkdocs_page(n: int) -> str:
    return (
        '<html><head><meta name="generator" content="mkdocs-1.5.3, mkdocs-theme-mkdocs">'
        f'<title>Page {n}</title></head><body><div role="main"><h1>Page {n}</h1>'
        f'<p>Words of page {n}.</p><a href="p{n + 1}.html">next</a></div></body></html>'
    )


def _crawl(mode: str, url: str, work: Path) -> tuple[int, dict[str, bytes]]:
    out = work / "out"
    cmd = [sys.executable, "-c", CRAWL, mode, "crawl", url, "--quiet"]
    cmd += ["--cache-dir", str(work / "cache"), "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    files = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    files.pop("changes.md", None)  # dated
    return probe["process_steps"], files


def test_a_fresh_page_needs_no_process_step_when_its_read_can_tell_its_record(
    tmp_path: Path,
) -> None:
    pages = {f"/p{n}.html": mkdocs_page(n) for n in range(SITE_PAGES)}
    index = "".join(f'<a href="p{n}.html">page {n}</a> ' for n in range(SITE_PAGES))
    root = write_site(tmp_path / "site", {**pages, "/index.html": f"<p>{index}</p>"})
    with serve_directory(root) as server:
        one_trip, outputs = _crawl("one-trip", server.url("/index.html"), tmp_path / "a")
        two_trips, expected = _crawl("two-trips", server.url("/index.html"), tmp_path / "b")
    assert two_trips == SITE_PAGES + 1  # every page, the index too
    assert one_trip <= templating.SETTLE_WINDOW
    assert outputs == expected  # and every output is the same, every page recorded once
