"""A child started with die_with_parent ends when the process that started it dies."""

from __future__ import annotations

import os
import subprocess
import sys
import time

# The middle process starts a long sleeper with the hook, prints its pid, then waits to be
# killed: nothing in it gets to clean up.
MIDDLE = """
import subprocess, sys, time
from tests.support.children import die_with_parent
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                         preexec_fn=die_with_parent)
print(child.pid, flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead, only not yet reaped
        return stat.read().split()[2] != "Z"


def test_the_child_dies_when_its_parent_is_killed():
    middle = subprocess.Popen(
        [sys.executable, "-c", MIDDLE], stdout=subprocess.PIPE, text=True, cwd=os.getcwd()
    )
    assert middle.stdout is not None
    child = int(middle.stdout.readline())
    assert _alive(child)
    middle.kill()
    middle.wait()
    give_up = time.monotonic() + 10
    while _alive(child) and time.monotonic() < give_up:
        time.sleep(0.05)
    survived = _alive(child)
    if survived:
        os.kill(child, 9)
    assert not survived
