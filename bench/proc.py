"""Peak memory and CPU of a process tree (pool workers included), wall time too."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Measured:
    wall_s: float
    peak_rss_mb: float
    cpu_s: float  # user + system of the process and every child it waited for
    code: int


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").glob("*"))
    except OSError:  # it exited between two looks (a short-lived child: the sampler lives on)
        return kids
    for task in tasks:
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


def measure(cmd: list[str], **kwargs: object) -> Measured:
    """Run ``cmd``: wall seconds, peak RSS of its whole tree, CPU seconds of the tree."""
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
    # wait4, not Popen.wait: its rusage covers the child and the children it reaped
    # (the CLI joins its pool workers), which is the crawl's whole CPU bill.
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    return Measured(wall, peak / 1024, usage.ru_utime + usage.ru_stime, proc.returncode)


def run_measured(cmd: list[str], **kwargs: object) -> tuple[float, float, int]:
    """Run ``cmd``; return (wall seconds, peak RSS of its whole tree in MB, exit code)."""
    m = measure(cmd, **kwargs)
    return m.wall_s, m.peak_rss_mb, m.code
