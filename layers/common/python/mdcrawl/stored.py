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
from json.decoder import scanstring
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
        return _document_markdown(data)
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


# How the markdown cache's document opens (``process._to_json``: the ConvertedPage's
# fields in their order, the standard encoder's ", " and ": " between them).
_TITLE = '{"title": "'
_MARKDOWN = ', "markdown": "'


def _document_markdown(data: bytes) -> str:
    """The document's markdown, what ``json.loads`` gives for it, read without decoding
    the rest: its element ids, nav and the like are half of an API page's document
    (Rust core), and finalize and the library read every page's markdown, several
    times, in the crawl's own process after the crawl. The two strings are read by the
    decoder's own ``scanstring``; a document of any other shape is decoded whole."""
    try:
        text = data.decode("utf-8")
        if text.startswith(_TITLE):
            _, end = scanstring(text, len(_TITLE))
            if text.startswith(_MARKDOWN, end):
                return str(scanstring(text, end + len(_MARKDOWN))[0])
    except ValueError:  # UnicodeDecodeError, JSONDecodeError: json.loads says what it says
        pass
    return str(_document(data).get("markdown") or "")


def _document(data: bytes) -> dict[str, Any]:
    doc = json.loads(data)
    return doc if isinstance(doc, dict) else {}
