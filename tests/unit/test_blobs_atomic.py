"""FileBlobStore's lean writes keep the atomic guarantee: a process killed (kill -9) in
the middle of a ``put`` leaves no blob, or the previous one, never a torn one; a folder
removed under a store is made again; a name a killed process left behind is skipped."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from mdcrawl.adapters.local import FileBlobStore
from mdcrawl.adapters.local.blobs import TEMP_PREFIX

WAIT_S = 120  # a bound on waiting for the child: a hang fails instead of blocking
KEY = "cache/bodies/0123abcd"
NEW = b"new bytes " * 100_000  # ~1 MB, written half before the kill
FORK = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="no fork start method"
)


def _put_half_then_hang(root: Path, ready: Any) -> None:
    """``put`` whose first ``os.write`` of a blob writes half of it, then the process
    hangs there (killed by the parent): a kill mid-write, every time."""
    real_write = os.write

    def half_then_hang(fd: int, data: Any) -> int:
        if len(data) < len(NEW):
            return real_write(fd, data)
        written = real_write(fd, bytes(data[: len(data) // 2]))
        ready.put("ready")
        time.sleep(3600)
        return written

    os.write = half_then_hang  # this child only
    FileBlobStore(root).put(KEY, NEW)


def _kill_mid_put(root: Path) -> None:
    context = multiprocessing.get_context("fork")
    ready = context.Queue()
    child = context.Process(target=_put_half_then_hang, args=(root, ready))
    child.start()
    assert ready.get(timeout=WAIT_S) == "ready"
    os.kill(child.pid, signal.SIGKILL)
    child.join(WAIT_S)
    assert child.exitcode == -signal.SIGKILL


def _temps(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith(TEMP_PREFIX))


@FORK
def test_a_put_killed_mid_write_leaves_no_blob(tmp_path: Path) -> None:
    _kill_mid_put(tmp_path)
    store = FileBlobStore(tmp_path)
    assert store.get(KEY) is None
    assert not store.exists(KEY)
    # The kill did land mid-write: half the bytes sit in a temporary file, under no key.
    (temp,) = _temps(tmp_path / "cache" / "bodies")
    assert temp.read_bytes() == NEW[: len(NEW) // 2]
    store.put(KEY, b"whole")  # and the key is writable afterwards
    assert store.get(KEY) == b"whole"


@FORK
def test_a_put_killed_mid_write_keeps_the_previous_blob(tmp_path: Path) -> None:
    FileBlobStore(tmp_path).put(KEY, b"old bytes")
    _kill_mid_put(tmp_path)
    assert FileBlobStore(tmp_path).get(KEY) == b"old bytes"


def test_a_folder_removed_under_the_store_is_made_again(tmp_path: Path) -> None:
    store = FileBlobStore(tmp_path)
    store.put("cache/chunks/a.jsonl", b"a")
    shutil.rmtree(tmp_path / "cache")
    store.put("cache/chunks/b.jsonl", b"b")
    with store.writer("cache/chunks/c.jsonl") as out:
        out.write(b"c")
    assert store.get("cache/chunks/b.jsonl") == b"b"
    assert store.get("cache/chunks/c.jsonl") == b"c"


def test_a_temporary_name_left_by_a_killed_process_is_skipped(tmp_path: Path) -> None:
    store = FileBlobStore(tmp_path)
    folder = tmp_path / "cache" / "markdown"
    folder.mkdir(parents=True)
    # The names this store will try first, taken by a process that had this pid.
    leftovers = [folder / f"{TEMP_PREFIX}{os.getpid()}-{n}" for n in range(3)]
    for leftover in leftovers:
        leftover.write_bytes(b"torn")
    store.put("cache/markdown/page.json", b"{}")
    assert store.get("cache/markdown/page.json") == b"{}"
    assert [p.read_bytes() for p in leftovers] == [b"torn"] * 3
    assert _temps(folder) == leftovers  # the write's own temporary file is gone


def test_blobs_are_the_users_own_and_leave_no_temporary_file(tmp_path: Path) -> None:
    store = FileBlobStore(tmp_path)
    store.put("jobs/j/docs.md", b"x" * 300_000)
    path = tmp_path / "jobs" / "j" / "docs.md"
    assert path.read_bytes() == b"x" * 300_000
    assert path.stat().st_mode & 0o077 == 0  # 0600, as tempfile.mkstemp made them
    assert _temps(path.parent) == []
