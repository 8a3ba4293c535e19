"""A page's stored markdown, whichever way the process step kept it.

- The job's own copy: ``jobs/{id}/pages/<hash>.md``, its element ids beside it in
  ``<hash>.anchors.json`` (``mdcrawl serve``; every runtime for a page converted at
  finalize).
- The markdown cache's document itself (``cache/markdown/...json``: the converted page,
  markdown and anchors in one JSON object), which the job's record points at instead of
  copying it (AWS: a fresh page then costs one S3 PUT for its markdown, a cached one
  none; ``mdcrawl crawl``: no file written per page and job).

Readers (finalize, the api's pages zip) go through these two functions only.
"""

from __future__ import annotations

import json
from typing import Any

from .names import BlobPrefix, anchors_key
from .ports import BlobStore


def is_cache_document(key: str) -> bool:
    return key.startswith(BlobPrefix.CACHE_MARKDOWN.value) and key.endswith(".json")


def read_markdown(blobs: BlobStore, key: str) -> str:
    """The page's markdown ("" when the blob is missing)."""
    data = blobs.get(key) if key else None
    if data is None:
        return ""
    if is_cache_document(key):
        return str(_document(data).get("markdown") or "")
    return data.decode("utf-8")


def read_anchors(blobs: BlobStore, key: str) -> dict[str, list[Any]]:
    """The page's ``{element id: [heading text, occurrence]}`` ({} when none)."""
    if not key:
        return {}
    if is_cache_document(key):
        data = blobs.get(key)
        return dict(_document(data).get("anchors") or {}) if data is not None else {}
    data = blobs.get(anchors_key(key))
    return json.loads(data) if data is not None else {}


def _document(data: bytes) -> dict[str, Any]:
    doc = json.loads(data)
    return doc if isinstance(doc, dict) else {}
