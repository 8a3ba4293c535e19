"""Child processes that a test starts must not outlive the test process."""

from __future__ import annotations

import ctypes
import signal
import sys


def die_with_parent() -> None:
    """Runs in the child before exec (``preexec_fn``): on Linux, ask for SIGTERM when the
    process that started it dies, so a child whose test process exits without cleaning up
    (pytest-xdist tearing a worker down, a crash, kill -9) is not left running. SIGTERM,
    not SIGKILL, so the child can still stop its own children."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
