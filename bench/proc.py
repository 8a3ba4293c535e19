"""Peak memory of a process tree, sampled from /proc (pool workers included)."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return kids


def _tree_rss_kb(pid: int) -> int:
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
        stack += _children(current)
    return total


def run_measured(cmd: list[str], **kwargs: object) -> tuple[float, float, int]:
    """Run ``cmd``; return (wall seconds, peak RSS of its whole tree in MB, exit code)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, **kwargs)  # type: ignore[call-overload]
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kb(proc.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = proc.wait()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    return wall, peak / 1024, code
