"""FileBlobStore's keys: the file a key names, and keys that would leave the store."""

from __future__ import annotations

from pathlib import Path

import pytest
from mdcrawl.adapters.local.blobs import FileBlobStore


@pytest.mark.parametrize(
    "key",
    ["a/b", "a//b", "a/./b", "./a", "a/", "cache/x.json", ".", "a/.b", "a/..b", "...", "a/ b"],
)
def test_a_key_names_the_file_pathlib_would(tmp_path: Path, key: str) -> None:
    """The store splits keys by hand; the file is the one PurePosixPath's parts name."""
    from pathlib import PurePosixPath

    assert FileBlobStore(tmp_path).path(key) == tmp_path.joinpath(*PurePosixPath(key).parts)


@pytest.mark.parametrize("key", ["", "/etc/passwd", "a/../../x", "..", "a\\\\b", "./../x"])
def test_a_key_leaving_the_store_is_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(ValueError, match="inside the store"):
        FileBlobStore(tmp_path).path(key)


def test_a_blobs_version_changes_when_it_is_written(tmp_path: Path) -> None:
    store = FileBlobStore(tmp_path)
    assert store.version("a/b.json") is None
    store.put("a/b.json", b"one")
    first = store.version("a/b.json")
    assert first is not None and first[0] == 3
    assert store.version("a/b.json") == first  # read twice, unchanged
    store.put("a/b.json", b"three")
    assert store.version("a/b.json") not in (None, first)
