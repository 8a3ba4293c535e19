"""FileBlobStore: blobs as files under a root folder, keys as relative paths.

Every write goes to a temporary file in the target's folder and is renamed over the
target when complete: rename is atomic, so a reader (or a kill -9) only ever sees the
old bytes or the new ones, never half a file. Temporary names start with ``.tmp-``,
which no key produced by mdcrawl does.

A fresh crawl writes three blobs a page (body, markdown, chunks), from every worker, so
``put`` is lean: the temporary file is opened with ``O_CREAT | O_EXCL`` (what
``tempfile.mkstemp`` does, mode 0600 as it gives) under a name made of the pid and a
counter rather than random letters, the bytes go down with ``os.write`` (no buffered
file object), and each folder is made once per store (``_made``) instead of a ``mkdir``
that fails with EEXIST and a ``stat`` per write. None of that touches the guarantee:
the bytes still reach the key only by ``os.replace`` of a complete file (a kill -9
before it leaves a ``.tmp-`` file, which nothing reads, and no key), and no write is
ever made to the key's own file (tests/unit/test_blobs_atomic.py kills writers
mid-write). Like before, nothing is fsynced: a blob is safe against a killed process,
not against a power cut.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from ...errors import StoreError

TEMP_PREFIX = ".tmp-"
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_TEMP_MODE = 0o600  # as tempfile.mkstemp made them: blobs are the user's own
_TEMP_TRIES = 100  # names taken already (a killed process's leftovers) before giving up


class FileBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        # Folders known to exist: made (or found) by this store. mdcrawl removes no
        # folder under a running store; if one goes anyway, the write that misses it
        # makes it again (``_open_temp``).
        self._made: set[str] = set()
        self._names = itertools.count()

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        """Write ``data`` at ``key`` atomically (``content_type`` matters to S3 only)."""
        with self._replacing(self._file(key)) as fd:
            try:
                _write_all(fd, data)
            finally:
                os.close(fd)

    def get(self, key: str) -> bytes | None:
        path = self._file(key)
        try:
            with open(path, "rb") as stream:
                return stream.read()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise StoreError(f"read {path}: {exc}") from exc

    def exists(self, key: str) -> bool:
        return os.path.isfile(self._file(key))

    def version(self, key: str) -> tuple[int, int] | None:
        """(size, mtime in ns) of the blob at ``key``, None if there is none: it changes
        whenever the blob is written (every write renames a new file into place), so
        comparing it stands for comparing the bytes without reading them."""
        try:
            info = os.stat(self._file(key))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise StoreError(f"stat {key}: {exc}") from exc
        return info.st_size, info.st_mtime_ns

    def writer(
        self, key: str, content_type: str = "text/markdown; charset=utf-8"
    ) -> AbstractContextManager[BinaryIO]:
        """Stream into a temporary file, renamed to ``key`` only if the block succeeds."""
        return self._atomic_write(self._file(key))

    def link(self, key: str, expires_s: int = 900, filename: str | None = None) -> str:
        """A file:// URL; local files do not expire and keep their own name."""
        return self.path(key).resolve().as_uri()

    def path(self, key: str) -> Path:
        """The file behind ``key``; refuses keys that would leave the root folder."""
        return Path(self._file(key))

    def _file(self, key: str) -> str:
        """``path`` as a string (what the writes and reads open: no Path built)."""
        # PurePosixPath(key).parts by hand (empty and "." segments dropped): building a
        # path object per blob read or write cost a re-crawl ~4 % of its CPU
        parts = [part for part in key.split("/") if part and part != "."]
        if not key or key.startswith("/") or ".." in parts or "\\" in key:
            raise ValueError(f"blob key must be a relative path inside the store: {key!r}")
        return os.path.join(self.root, *parts)

    def _open_temp(self, target: str) -> tuple[int, str]:
        """A new, empty temporary file beside ``target``: (fd, path)."""
        folder = os.path.dirname(target)
        try:
            if folder not in self._made:
                os.makedirs(folder, exist_ok=True)
                self._made.add(folder)
            for _ in range(_TEMP_TRIES):
                temp = os.path.join(folder, f"{TEMP_PREFIX}{os.getpid()}-{next(self._names)}")
                try:
                    return os.open(temp, _TEMP_FLAGS, _TEMP_MODE), temp
                except FileExistsError:
                    continue  # a leftover of a killed process that had this pid
                except FileNotFoundError:
                    self._made.discard(folder)  # removed under us: made again
                    os.makedirs(folder, exist_ok=True)
                    self._made.add(folder)
            raise FileExistsError(f"no free temporary name in {folder}")
        except OSError as exc:
            raise StoreError(f"write {target}: {exc}") from exc

    @contextmanager
    def _atomic_write(self, target: str) -> Iterator[BinaryIO]:
        with self._replacing(target) as fd, os.fdopen(fd, "wb") as out:
            yield out

    @contextmanager
    def _replacing(self, target: str) -> Iterator[int]:
        """The descriptor of a new temporary file beside ``target``, which the block
        fills and closes; renamed over ``target`` when the block succeeds, removed when
        it fails (an OSError then raised as a StoreError)."""
        fd, temp = self._open_temp(target)
        try:
            yield fd
            os.replace(temp, target)
        except BaseException as exc:
            _discard(temp)
            if isinstance(exc, OSError):
                raise StoreError(f"write {target}: {exc}") from exc
            raise


def _write_all(fd: int, data: bytes) -> None:
    """``data`` to ``fd`` whole (``os.write`` may write less than it was given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _discard(temp: str) -> None:
    with suppress(FileNotFoundError):
        os.unlink(temp)
