"""Kill the CLI mid-crawl (kill -9, Ctrl-C); the same command resumes and ends the same."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mdcrawl.adapters.local import open_local_stores
from mdcrawl.models import UrlState

from tests.support.children import die_with_parent
from tests.support.demo import crawl, read_manifest
from tests.support.server import RunningServer, serve_directory
from tests.support.sites import require_site

ROOT = Path(__file__).resolve().parents[2]


def _start_cli(url: str, cache: Path, out: Path) -> subprocess.Popen[bytes]:
    args = [
        sys.executable,
        "-m",
        "mdcrawl.cli",
        "crawl",
        url,
        "--cache-dir",
        str(cache),
        "--out",
        str(out),
        "--quiet",
        "--concurrency",
        "2",
    ]
    return subprocess.Popen(
        args,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=die_with_parent,
    )


def _wait_for_pages(server: RunningServer, count: int, proc: subprocess.Popen[bytes]) -> None:
    """Until the server has answered ``count`` page requests (polling; no timing asserted)."""
    while (
        sum(
            r.status == 200 and r.path.endswith((".html", "/")) for r in list(server.stats.requests)
        )
        < count
    ):
        assert proc.poll() is None, "the crawl ended before it could be interrupted"
        time.sleep(0.02)


def _wait_for_done(cache: Path, base: str, count: int, proc: subprocess.Popen[bytes]) -> None:
    """Until ``count`` URLs of the crawl are done in its frontier (polling)."""
    while len(_done_paths(cache, base)) < count:
        assert proc.poll() is None, "the crawl ended before it could be interrupted"
        time.sleep(0.02)


def _done_paths(cache: Path, base: str) -> set[str]:
    with open_local_stores(cache) as stores:
        jobs = {row for row in stores.db.query("SELECT job_id FROM jobs", ())}
        assert len(jobs) == 1
        job_id = next(iter(jobs))["job_id"]
        items = stores.frontier.items(job_id)
    return {i.url.removeprefix(base) for i in items if i.state is UrlState.DONE}


def _outputs(out: Path) -> dict[str, object]:
    manifest = [{k: v for k, v in m.items() if k != "from_cache"} for m in read_manifest(out)]
    pages = {p.name: p.read_text() for p in sorted((out / "pages").glob("*.md"))}
    return {
        "docs": (out / "docs.md").read_text(),
        "llms": (out / "llms.txt").read_text(),
        "manifest": manifest,
        "pages": pages,
    }


def _interrupted_then_resumed(
    tmp_path: Path, sig: int
) -> tuple[RunningServer, set[str], list[str], int]:
    site = require_site("requests")
    with serve_directory(site.root, latency=0.1) as server:
        url = server.url(site.start)
        proc = _start_cli(url, tmp_path / "cache", tmp_path / "out")
        _wait_for_pages(server, 8, proc)
        os.kill(proc.pid, sig)
        code = proc.wait()
        done_before = _done_paths(tmp_path / "cache", server.base_url)
        server.stats.reset()
        assert crawl(url, tmp_path / "cache", tmp_path / "out") == 0
        refetched = [r.path for r in server.stats.requests if r.method == "GET"]
        assert crawl(url, tmp_path / "fresh-cache", tmp_path / "baseline") == 0
    return server, done_before, refetched, code


def test_kill_9_then_same_command_resumes(tmp_path: Path) -> None:
    _, done_before, refetched, code = _interrupted_then_resumed(tmp_path, signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert done_before, "nothing was finished before the kill"
    assert done_before.isdisjoint(refetched)
    assert _outputs(tmp_path / "out") == _outputs(tmp_path / "baseline")


def test_ctrl_c_keeps_state_and_says_how_to_resume(tmp_path: Path) -> None:
    site = require_site("requests")
    with serve_directory(site.root, latency=0.1) as server:
        proc = _start_cli(server.url(site.start), tmp_path / "cache", tmp_path / "out")
        _wait_for_pages(server, 6, proc)
        # answered is not yet done: a page's outcome is applied once a worker read it
        # (on a loaded machine the workers may still be starting)
        _wait_for_done(tmp_path / "cache", server.base_url, 2, proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate()
        done_before = _done_paths(tmp_path / "cache", server.base_url)
        server.stats.reset()
        assert crawl(server.url(site.start), tmp_path / "cache", tmp_path / "out") == 0
        refetched = [r.path for r in server.stats.requests if r.method == "GET"]
    assert proc.returncode == 130
    assert b"Run the same command again" in err
    assert done_before and done_before.isdisjoint(refetched)


def _children(pid: int) -> set[int]:
    kids: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            kids |= {int(c) for c in (task / "children").read_text().split()}
    return kids


def _descendants(pid: int) -> set[int]:
    found, stack = set(), [pid]
    while stack:
        kids = _children(stack.pop()) - found
        found |= kids
        stack += kids
    return found


def test_conversion_workers_leave_with_a_killed_crawl(tmp_path: Path) -> None:
    site = require_site("requests")
    with serve_directory(site.root, latency=0.1) as server:
        proc = _start_cli(server.url(site.start), tmp_path / "cache", tmp_path / "out")
        _wait_for_pages(server, 8, proc)
        workers = _descendants(proc.pid)  # the forkserver and the workers it forked
        assert len(workers) > 2, "the crawl had no conversion workers to watch"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        # Polled, not timed: workers notice their parent is gone within about a second.
        for _ in range(300):
            alive = {w for w in workers if Path(f"/proc/{w}").exists()}
            if not alive:
                break
            time.sleep(0.05)
        assert not alive, f"orphaned workers still running: {sorted(alive)}"
