"""The last assembly of each output folder, so that an unchanged crawl rewrites nothing.

Assembling (ordering, link rewriting, quality report, chunks) is most of a cached
re-crawl's CPU, and its result is a function of its inputs alone: the job's start URL,
options, truncation and crawl date, each record (all but which job made it and whether
it came from the cache), each page's markdown and element ids (``_blob_mark``), and
the assembling code itself. ``FileOutputMemo`` keeps a digest of those inputs per output
folder (in the cache folder, never among the outputs), and the size and mtime of every
file the assembly wrote. When a later finalize of the same folder has the same digest and
finds the files as they were left, the outputs are already what it would write: only
``manifest.jsonl`` is written again, because its ``from_cache`` column is the one thing
that differs (patched line by line, so every other byte stays). Anything else — one
changed page, a file edited or removed, another mdcrawl — and the folder is cleared and
assembled in full, as before.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, fields
from pathlib import Path
from typing import BinaryIO

from ...assemble import MANIFEST, PAGES_DIR, AssembledResult, OutputOpener, crawl_date
from ...models import Job, PageRecord
from ...names import anchors_key
from ...stored import is_cache_document
from .blobs import FileBlobStore

MEMO_PREFIX = "outputs/"
# The modules whose code decides what the outputs hold: a change to any of them (an
# upgrade, a checkout) means the last assembly is not what this code would write.
ASSEMBLING_MODULES = (
    "mdcrawl.assemble",
    "mdcrawl.agent_outputs",
    "mdcrawl.anchors",
    "mdcrawl.chunks",
    "mdcrawl.llms",
    "mdcrawl.order",
    "mdcrawl.parts",
    "mdcrawl.quality",
    "mdcrawl.rewrite",
    "mdcrawl.titles",
    "mdcrawl.tokens",
    "mdcrawl.pipeline.finalize",
    "mdcrawl.adapters.local.outputs",
)
# Record fields that do not reach the outputs' bytes, or (from_cache) only the manifest's.
_NOT_INPUTS = frozenset({"job_id", "markdown_key", "from_cache"})


class FileOutputMemo:
    """``finalize``'s memo (``pipeline.finalize.OutputMemo``) for one output folder."""

    def __init__(self, blobs: FileBlobStore, out_dir: Path) -> None:
        self._blobs, self._out = blobs, out_dir
        folder = str(out_dir.resolve()).encode("utf-8")
        self._key = f"{MEMO_PREFIX}{hashlib.sha256(folder).hexdigest()[:32]}.json"
        self._written: list[str] = []
        self._digest = ""

    def opener(self, open_output: OutputOpener) -> OutputOpener:
        """``open_output``, noting each name written (their sizes are remembered)."""

        @contextmanager
        def tracked(name: str) -> Iterator[BinaryIO]:
            with open_output(name) as stream:
                yield stream
            self._written.append(name)

        return tracked

    def reuse(self, job: Job, records: Sequence[PageRecord]) -> AssembledResult | None:
        """The last assembly's result if it stands (the manifest rewritten), else None
        after removing the page files an assembly in full would not overwrite."""
        self._digest = inputs_digest(job, records, self._blobs)
        state = self._load()
        if state is None or state["digest"] != self._digest or not self._intact(state):
            self._clear_pages()
            return None
        self._patch_manifest(state["result"]["manifest_order"], records)
        self._written = list(state["files"])
        self._save(state["result"])
        return _result(state["result"])

    def remember(self, job: Job, records: Sequence[PageRecord], result: AssembledResult) -> None:
        self._digest = self._digest or inputs_digest(job, records, self._blobs)
        self._written += result.names  # page files written elsewhere (write_outputs) too
        self._save(asdict(result))

    def _save(self, result: dict[str, object]) -> None:
        files = {name: _stat(self._out / name) for name in dict.fromkeys(self._written)}
        state = {"digest": self._digest, "files": files, "result": result}
        self._blobs.put(self._key, json.dumps(state).encode("utf-8"), "application/json")

    def _load(self) -> dict | None:
        data = self._blobs.get(self._key)
        try:
            return json.loads(data) if data else None
        except ValueError:
            return None

    def _intact(self, state: dict) -> bool:
        """Every file as the last assembly left it, and no other page file beside them."""
        files = state["files"]
        if any(_stat(self._out / name) != stat for name, stat in files.items()):
            return False
        on_disk = {f"{PAGES_DIR}{p.name}" for p in (self._out / PAGES_DIR).glob("*.md")}
        return on_disk == {name for name in files if name.startswith(PAGES_DIR)}

    def _patch_manifest(self, order: list[str], records: Sequence[PageRecord]) -> None:
        """Each manifest line gets its record's ``from_cache``; nothing else changes."""
        from_cache = {r.url_hash: r.from_cache for r in records}
        path = self._out / MANIFEST
        lines = path.read_text(encoding="utf-8").splitlines()
        patched = []
        for url_hash, line in zip(order, lines, strict=True):
            entry = json.loads(line)
            entry["from_cache"] = from_cache.get(url_hash, entry["from_cache"])
            patched.append(json.dumps(entry, ensure_ascii=False) + "\n")
        path.write_bytes("".join(patched).encode("utf-8"))

    def _clear_pages(self) -> None:
        """Page files of an earlier run would linger next to the new ones (other names)."""
        for stale in (self._out / PAGES_DIR).glob("*.md"):
            stale.unlink()


def inputs_digest(job: Job, records: Sequence[PageRecord], blobs: FileBlobStore) -> str:
    """Everything the outputs' bytes depend on (the manifest's from_cache aside)."""
    digest = hashlib.sha256()
    head = [job.url, job.truncated, job.left, crawl_date(job), job.options.to_dict()]
    digest.update(json.dumps([head, _code_digest()], sort_keys=True, default=str).encode())
    for record in records:
        kept = {f.name: getattr(record, f.name) for f in fields(record)}
        kept = {name: value for name, value in kept.items() if name not in _NOT_INPUTS}
        digest.update(json.dumps(kept, sort_keys=True, default=str).encode("utf-8"))
        key = record.markdown_key
        for blob_key in (key, anchors_key(key)) if key else ():
            digest.update(_blob_mark(blobs, blob_key).encode())
    return digest.hexdigest()


def _blob_mark(blobs: FileBlobStore, key: str) -> str:
    """What stands for a blob's bytes in the digest. A markdown cache document is named
    by its page's body, base URL and converter version: its key and its version (size
    and mtime, which every write changes) say it is the same without reading it —
    reading and hashing every page was most of checking that an unchanged re-crawl's
    outputs stand. Any other blob (a job's own copy, a native twin) by its bytes."""
    if is_cache_document(key):
        return json.dumps([key, blobs.version(key)])
    return hashlib.sha256(blobs.get(key) or b"").hexdigest()


def _code_digest() -> str:
    digest = hashlib.sha256()
    for name in ASSEMBLING_MODULES:
        # The module's file, found without importing it (anchors.py would load the
        # extractor, which an all-cached re-crawl otherwise never needs).
        spec = importlib.util.find_spec(name)
        digest.update(Path(spec.origin if spec and spec.origin else "").read_bytes())
    return digest.hexdigest()


def _stat(path: Path) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns]


def _result(data: dict) -> AssembledResult:
    known = {f.name for f in fields(AssembledResult)}
    values = {k: v for k, v in data.items() if k in known}
    values["names"] = tuple(values.get("names", ()))
    values["manifest_order"] = tuple(values.get("manifest_order", ()))
    return AssembledResult(**values)
