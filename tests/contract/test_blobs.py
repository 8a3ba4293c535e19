"""BlobStore contract: round trip, missing keys, overwrite, streamed and failed writes."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

MB = 1024 * 1024


def test_put_then_get_round_trips_bytes(blobs):
    data = bytes(range(256)) * 10
    blobs.put("cache/bodies/ab/abcdef", data, "text/html")
    assert blobs.get("cache/bodies/ab/abcdef") == data
    assert blobs.exists("cache/bodies/ab/abcdef") is True


def test_a_missing_key_is_none_and_does_not_exist(blobs):
    assert blobs.get("jobs/nope/docs.md") is None
    assert blobs.exists("jobs/nope/docs.md") is False


def test_a_key_below_a_missing_key_is_missing_too(blobs):
    blobs.put("jobs/j1/docs.md", b"x")
    assert blobs.get("jobs/j1/docs.md/inner") is None


def test_an_empty_blob_is_not_a_missing_one(blobs):
    blobs.put("jobs/j1/empty.md", b"")
    assert blobs.get("jobs/j1/empty.md") == b""
    assert blobs.exists("jobs/j1/empty.md") is True


def test_put_replaces_the_bytes(blobs):
    blobs.put("jobs/j1/llms.txt", b"old")
    blobs.put("jobs/j1/llms.txt", b"new")
    assert blobs.get("jobs/j1/llms.txt") == b"new"


def test_writer_streams_a_large_object_in_parts(blobs):
    part = b"# heading\n" + b"word " * (MB // 5)
    with blobs.writer("jobs/j1/docs.md") as out:
        for _ in range(12):
            out.write(part)
    stored = blobs.get("jobs/j1/docs.md")
    assert len(stored) == 12 * len(part)
    assert stored == part * 12


def test_a_writer_that_fails_leaves_no_object(blobs):
    with pytest.raises(RuntimeError), blobs.writer("jobs/j1/docs.md") as out:
        out.write(b"half a document")
        raise RuntimeError("conversion crashed")
    assert blobs.get("jobs/j1/docs.md") is None


def test_a_writer_that_fails_keeps_the_previous_object(blobs):
    blobs.put("jobs/j1/docs.md", b"complete")
    with pytest.raises(RuntimeError), blobs.writer("jobs/j1/docs.md") as out:
        out.write(b"partial")
        raise RuntimeError("conversion crashed")
    assert blobs.get("jobs/j1/docs.md") == b"complete"


def test_link_is_a_url(blobs):
    blobs.put("jobs/j1/docs.md", b"# Docs")
    link = blobs.link("jobs/j1/docs.md", expires_s=60, filename="docs.md")
    assert urlparse(link).scheme in ("file", "https", "http")
