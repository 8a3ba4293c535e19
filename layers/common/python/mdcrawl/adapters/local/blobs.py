"""FileBlobStore: blobs as files under a root folder, keys as relative paths.

Every write goes to a temporary file in the target's folder and is renamed over the
target when complete: rename is atomic, so a reader (or a kill -9) only ever sees the
old bytes or the new ones, never half a file. Temporary names start with ``.tmp-``,
which no key produced by mdcrawl does.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from ...errors import StoreError

TEMP_PREFIX = ".tmp-"


class FileBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        """Write ``data`` at ``key`` atomically (``content_type`` matters to S3 only)."""
        with self.writer(key, content_type) as out:
            out.write(data)

    def get(self, key: str) -> bytes | None:
        path = self.path(key)
        try:
            return path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise StoreError(f"read {path}: {exc}") from exc

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def writer(
        self, key: str, content_type: str = "text/markdown; charset=utf-8"
    ) -> AbstractContextManager[BinaryIO]:
        """Stream into a temporary file, renamed to ``key`` only if the block succeeds."""
        return self._atomic_write(self.path(key))

    def link(self, key: str, expires_s: int = 900, filename: str | None = None) -> str:
        """A file:// URL; local files do not expire and keep their own name."""
        return self.path(key).resolve().as_uri()

    def path(self, key: str) -> Path:
        """The file behind ``key``; refuses keys that would leave the root folder."""
        parts = PurePosixPath(key).parts
        if not key or key.startswith("/") or ".." in parts or "\\" in key:
            raise ValueError(f"blob key must be a relative path inside the store: {key!r}")
        return self.root.joinpath(*parts)

    @contextmanager
    def _atomic_write(self, target: Path) -> Iterator[BinaryIO]:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=target.parent)
        except OSError as exc:
            raise StoreError(f"write {target}: {exc}") from exc
        try:
            with os.fdopen(fd, "wb") as out:
                yield out
            os.replace(temp, target)
        except BaseException as exc:
            Path(temp).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise StoreError(f"write {target}: {exc}") from exc
            raise
