"""The content cache's objects packed: one S3 PUT per batch instead of one per page.

A fetched body (``cache/bodies/<sha256>``) and a converted page (``cache/markdown/...``)
were one PutObject each, $0.005 per 1,000: at two per fresh page, more than a third of
what a page cost. ``PackedBlobs`` keeps those keys (the cache stays content-addressed
and shared by every job and user: same key, same bytes) but stores what is written
inside a ``packing()`` block (a crawler batch, a processor invocation) as one object,
``<prefix>packs/<sha256 of the pack>``, and each key's place in it as a *locator* item
in the cache table (``url_hash = "blob#" + key``: pack, offset, length; one write unit).
A read is the locator (a strongly consistent GetItem: the processor reads a body the
crawler wrote seconds ago) and a ranged GET; an existence check is the locator alone,
no HEAD (S3 answers a HEAD of a missing key 403 without ``s3:ListBucket``; a missing
locator is just no item).

Nothing may point at a key before its pack exists: a block's pack and locators are
written when the block ends (the crawler ends its batch before it answers, and the
process step's records are written after it: ``flush_before``). A crash before that
loses the block's writes, which reads then see as cache misses (fetched or converted
again), never as an error.

Expiry: packs live under the cache prefixes, so the bucket's lifecycle rules expire
them ``keep_s`` after their write, as the single objects were. A locator carries that
date; one read past ``refresh_s`` of it writes the entry again (into the current
block's pack), which is what the single objects' copy-onto-itself did; a locator past
its pack's expiry (DynamoDB's TTL deletes late) reads as missing.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ...errors import StoreError
from ...names import TTL_ATTRIBUTE, BlobPrefix
from .cache import batch_get_items
from .calls import call
from .dynamo import from_item, to_item

PACKED_PREFIXES = (BlobPrefix.CACHE_BODIES.value, BlobPrefix.CACHE_MARKDOWN.value)
PACKS = "packs/"
# A job's record points at its markdown cache document, which must outlive the job; a
# body's cache entry is checked (``exists``) before use, so an expired body is refetched.
REFRESHED = BlobPrefix.CACHE_MARKDOWN.value
LOCATOR = "blob#"
BATCH_WRITE = 25  # DynamoDB's BatchWriteItem maximum
EXPIRY_MARGIN_S = 86400.0  # a pack within a day of its lifecycle expiry counts as gone
# A block holding more than this stores what it has at once (a batch of pages near the
# 10 MB fetch cap must not hold the crawler's 512 MB twice over: entries, then the pack).
# Storing early is always safe: nothing may point at a key before, any time after.
MAX_PENDING_BYTES = 32 * 1024 * 1024


def packed(key: str) -> bool:
    """A key ``PackedBlobs`` stores inside packs (not a pack itself)."""
    return key.startswith(PACKED_PREFIXES) and not any(
        key.startswith(prefix + PACKS) for prefix in PACKED_PREFIXES
    )


@dataclass(frozen=True)
class _Location:
    pack: str
    offset: int
    length: int
    expires: float

    @property
    def end(self) -> int:
        return self.offset + self.length


@dataclass
class _Block:
    """What one ``packing()`` block wrote (not stored yet) and read (kept, for the
    process step reads a body and a cache document twice: to decide, then to convert)."""

    pending: dict[str, bytes] = field(default_factory=dict)
    seen: dict[str, bytes | None] = field(default_factory=dict)
    located: dict[str, _Location | None] = field(default_factory=dict)


# Keys read together: same pack, close together (``_runs``), each with its place.
Run = list[tuple[str, _Location]]


class PackedBlobs:
    def __init__(
        self,
        inner: Any,
        dynamodb: Any,
        table: str,
        keep_s: float,
        refresh_s: float,
        now: Callable[[], float] = time.time,
    ) -> None:
        self._inner, self._dynamodb, self._table = inner, dynamodb, table
        self._keep_s, self._refresh_s, self._now = keep_s, refresh_s, now
        self._local = threading.local()  # one open block per thread

    # -- the block ------------------------------------------------------------------
    @contextmanager
    def packing(self) -> Iterator[None]:
        """Writes of cache keys in the block go out as one pack when it ends (nested
        blocks join the outer one)."""
        if self._block() is not None:
            yield
            return
        self._local.block = _Block()
        try:
            yield
            self.flush()
        finally:
            self._local.block = None

    def flush(self) -> None:
        """Store the block's pending writes now (one pack per cache prefix)."""
        block = self._block()
        if block is None or not block.pending:
            return
        pending, block.pending = block.pending, {}
        self._store(pending)

    def _block(self) -> _Block | None:
        return getattr(self._local, "block", None)

    # -- BlobStore ------------------------------------------------------------------
    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        if not packed(key):
            self._inner.put(key, data, content_type)
            return
        block = self._block()
        if block is None:
            self._store({key: bytes(data)})
        else:
            block.pending[key] = bytes(data)
            block.seen[key] = bytes(data)
            if sum(map(len, block.pending.values())) > MAX_PENDING_BYTES:
                self.flush()

    def get(self, key: str) -> bytes | None:
        if not packed(key):
            data: bytes | None = self._inner.get(key)
            return data
        block = self._block()
        if block is not None and key in block.seen:
            return block.seen[key]
        if block is not None and key in block.located:
            found = block.located[key]
        else:
            found = self._locate(key)
        data = self._read(key, found) if found is not None else None
        if block is not None:
            block.seen[key] = data
        return data

    def exists(self, key: str) -> bool:
        if not packed(key):
            return bool(self._inner.exists(key))
        block = self._block()
        if block is not None and key in block.seen:
            return block.seen[key] is not None
        if block is not None and key in block.located:
            return block.located[key] is not None
        return self._locate(key) is not None

    def prefetch_locations(self, keys: Iterable[str]) -> None:
        """Where each of ``keys`` sits, asked in one BatchGetItem (per 100) and kept for
        the block: its ``exists`` and ``get`` of them need no request of their own."""
        block = self._block()
        if block is None:
            return
        wanted = [k for k in dict.fromkeys(keys) if packed(k) and k not in block.seen]
        wanted = [k for k in wanted if k not in block.located]
        if not wanted:
            return
        block.located.update(self._locate_many(wanted))

    def _locate_many(self, keys: list[str]) -> dict[str, _Location | None]:
        """Where each of ``keys`` (packed) sits, None where nowhere: one BatchGetItem per 100."""
        located: dict[str, _Location | None] = dict.fromkeys(keys)
        keys_ = [{"url_hash": {"S": LOCATOR + k}} for k in keys]
        for item in batch_get_items(self._dynamodb, self._table, keys_, consistent=True):
            attrs = from_item(item)
            located[str(attrs["url_hash"]).removeprefix(LOCATOR)] = self._location(attrs)
        return located

    def planned_reads(self, keys: Iterable[str]) -> tuple[list[Run], list[str], list[str]]:
        """How to read many keys without a block (finalize reads every page of a job, from
        many threads): (runs of packed keys found, each one ranged GET through
        ``read_run``; packed keys found nowhere; the other keys, read one by one). Where a
        GetItem and a GET per key did."""
        keys = list(dict.fromkeys(keys))
        located = self._locate_many([k for k in keys if packed(k)])
        found = [(k, loc) for k, loc in located.items() if loc is not None]
        missing = [k for k, loc in located.items() if loc is None]
        return list(_runs(found)), missing, [k for k in keys if not packed(k)]

    def read_run(self, run: Run) -> dict[str, bytes | None]:
        """The data of a run of ``planned_reads``, read in one ranged GET."""
        first = run[0][1]
        start, end = first.offset, max(loc.end for _, loc in run)
        data = self._inner.get_range(first.pack, start, end - start)
        pieces: dict[str, bytes | None] = {}
        for key, loc in run:
            piece = None if data is None else data[loc.offset - start : loc.end - start]
            pieces[key] = piece
            if piece is not None:
                self._refresh_if_old(key, piece, loc)
        return pieces

    def prefetch(self, keys: Iterable[str]) -> None:
        """``prefetch_locations``, then the data of those found: entries of one pack
        lying close together come in one ranged GET (a batch's pages were packed
        together, in order)."""
        block = self._block()
        if block is None:
            return
        keys = [k for k in dict.fromkeys(keys) if packed(k) and k not in block.seen]
        self.prefetch_locations(keys)
        found = [(k, loc) for k in keys if (loc := block.located.get(k)) is not None]
        for run in _runs(found):
            self._read_run(run, block)

    def _read_run(self, run: Run, block: _Block) -> None:
        block.seen.update(self.read_run(run))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    # -- packs and locators ---------------------------------------------------------
    def _read(self, key: str, found: _Location) -> bytes | None:
        data: bytes | None = self._inner.get_range(found.pack, found.offset, found.length)
        if data is not None:
            self._refresh_if_old(key, data, found)
        return data

    def _refresh_if_old(self, key: str, data: bytes, found: _Location) -> None:
        old = found.expires - self._now() < self._keep_s - self._refresh_s
        if old and key.startswith(REFRESHED):
            self.put(key, data)  # keep it alive: written again, into a fresh pack

    def _locate(self, key: str) -> _Location | None:
        found = call(
            self._dynamodb.get_item,
            TableName=self._table,
            Key={"url_hash": {"S": LOCATOR + key}},
            ConsistentRead=True,
        )
        return self._location(from_item(found["Item"])) if "Item" in found else None

    def _location(self, item: dict[str, Any]) -> _Location | None:
        expires = float(item[TTL_ATTRIBUTE])
        if expires - self._now() < EXPIRY_MARGIN_S:
            return None  # its pack is expiring (or gone): a miss
        return _Location(str(item["pack"]), int(item["offset"]), int(item["length"]), expires)

    def _store(self, entries: dict[str, bytes]) -> None:
        by_prefix: dict[str, list[tuple[str, bytes]]] = {}
        for key, data in entries.items():
            prefix = next(p for p in PACKED_PREFIXES if key.startswith(p))
            by_prefix.setdefault(prefix, []).append((key, data))
        for prefix, items in by_prefix.items():
            self._write_pack(prefix, items)

    def _write_pack(self, prefix: str, items: list[tuple[str, bytes]]) -> None:
        content = b"".join(data for _, data in items)
        pack = f"{prefix}{PACKS}{hashlib.sha256(content).hexdigest()}"
        self._inner.put(pack, content, "application/octet-stream")
        expires = int(self._now() + self._keep_s)
        locators, offset = [], 0
        for key, data in items:
            locators.append(
                {
                    "url_hash": LOCATOR + key,
                    "pack": pack,
                    "offset": offset,
                    "length": len(data),
                    TTL_ATTRIBUTE: expires,
                }
            )
            offset += len(data)
        for start in range(0, len(locators), BATCH_WRITE):
            self._write_locators(locators[start : start + BATCH_WRITE])

    def _write_locators(self, items: list[dict[str, Any]]) -> None:
        requests = [{"PutRequest": {"Item": to_item(item)}} for item in items]
        for attempt in range(8):
            answer = call(self._dynamodb.batch_write_item, RequestItems={self._table: requests})
            requests = answer.get("UnprocessedItems", {}).get(self._table, [])
            if not requests:
                return
            time.sleep(min(0.05 * 2**attempt, 1.0))
        raise StoreError(f"{len(requests)} cache locators still unprocessed after retries")


def _runs(found: list[tuple[str, _Location]]) -> Iterator[Run]:
    """Entries grouped for one ranged GET each: same pack, and a run no more than twice
    the bytes it is read for (gaps are other pages' entries)."""
    by_pack: dict[str, list[tuple[str, _Location]]] = {}
    for key, loc in found:
        by_pack.setdefault(loc.pack, []).append((key, loc))
    for entries in by_pack.values():
        entries.sort(key=lambda pair: pair[1].offset)
        run: list[tuple[str, _Location]] = []
        for pair in entries:
            if run and not _worth_joining(run, pair[1]):
                yield run
                run = []
            run.append(pair)
        if run:
            yield run


def _worth_joining(run: list[tuple[str, _Location]], loc: _Location) -> bool:
    start = run[0][1].offset
    wanted = sum(joined.length for _, joined in run) + loc.length
    end = max(loc.end, *(joined.end for _, joined in run))
    return end - start <= 2 * wanted + 4096


def flush_before(store: Any, blobs: Any) -> Any:
    """``store`` (a PageStore) whose ``put`` first stores ``blobs``' pending writes: a
    record may point at the markdown cache's document, which must exist by then."""
    return _FlushFirst(store, blobs)


class _FlushFirst:
    def __init__(self, inner: Any, blobs: Any) -> None:
        self._inner, self._blobs = inner, blobs

    def put(self, record: Any) -> bool:
        flush = getattr(self._blobs, "flush", None)
        if flush is not None:
            flush()
        return bool(self._inner.put(record))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
