"""PackedBlobs under moto: the content cache's writes of a block go out as one S3 object,
each key found again through its locator (ranged reads), existence without a HEAD,
expiry and the refresh of an old converted page."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from mdcrawl.adapters.aws import packs
from mdcrawl.adapters.aws.blobs import S3BlobStore
from mdcrawl.adapters.aws.packs import PackedBlobs, flush_before, packed
from mdcrawl.names import Table

from tests.support.aws import moto_clients

DAY = 86400.0
BODY_A, BODY_B = "cache/bodies/aaa", "cache/bodies/bbb"
DOC = "cache/markdown/v1/aaa-base.json"


class Counted:
    """A boto3 client with its calls counted by operation."""

    def __init__(self, client: Any) -> None:
        self.client, self.calls = client, Counter()

    def __getattr__(self, name: str) -> Any:
        operation = getattr(self.client, name)
        if not callable(operation) or name.startswith("_"):
            return operation

        def counted(**kwargs: Any) -> Any:
            self.calls[name] += 1
            return operation(**kwargs)

        counted.__name__ = name
        return counted


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def setup():
    with moto_clients() as aws:
        s3, dynamodb, clock = Counted(aws.s3), Counted(aws.dynamodb), Clock()
        blobs = PackedBlobs(
            S3BlobStore(s3, aws.bucket),
            dynamodb,
            aws.names[Table.CACHE],
            keep_s=30 * DAY,
            refresh_s=28 * DAY,
            now=clock,
        )
        yield blobs, s3, dynamodb, clock, aws


def test_writes_in_a_block_are_one_object_and_each_key_reads_back_by_range(setup) -> None:
    blobs, s3, dynamodb, _, _ = setup
    with blobs.packing():
        blobs.put(BODY_A, b"<html>a</html>")
        blobs.put(BODY_B, b"<html>bb</html>")
        assert s3.calls["put_object"] == 0  # nothing stored inside the block
        assert blobs.get(BODY_A) == b"<html>a</html>"  # but readable
    assert s3.calls["put_object"] == 1
    assert dynamodb.calls["batch_write_item"] == 1
    s3.calls.clear()
    assert blobs.get(BODY_B) == b"<html>bb</html>"
    assert blobs.get(BODY_A) == b"<html>a</html>"
    assert s3.calls == Counter(get_object=2)  # ranged GETs of the one pack


def test_existence_is_the_locator_not_a_head(setup) -> None:
    blobs, s3, _, _, _ = setup
    assert not blobs.exists(BODY_A)
    blobs.put(BODY_A, b"x")  # outside a block: its own pack, stored at once
    assert blobs.exists(BODY_A)
    assert s3.calls["head_object"] == 0


def test_a_block_that_raises_stores_nothing_and_reads_see_a_miss(setup) -> None:
    blobs, s3, _, _, _ = setup
    with pytest.raises(RuntimeError), blobs.packing():
        blobs.put(BODY_A, b"x")
        raise RuntimeError("crawler died")
    assert s3.calls["put_object"] == 0
    assert blobs.get(BODY_A) is None and not blobs.exists(BODY_A)


def test_a_record_written_in_the_block_first_stores_what_it_may_point_at(setup) -> None:
    blobs, s3, _, _, _ = setup

    class Pages:
        def __init__(self) -> None:
            self.stored_before: list[int] = []

        def put(self, record: object) -> bool:
            self.stored_before.append(s3.calls["put_object"])
            return True

    pages = Pages()
    with blobs.packing():
        blobs.put(DOC, b'{"markdown": "# A"}')
        flush_before(pages, blobs).put("record")
        flush_before(pages, blobs).put("record 2")  # nothing pending: no second object
    assert pages.stored_before == [1, 1] and s3.calls["put_object"] == 1
    assert blobs.get(DOC) == b'{"markdown": "# A"}'


def test_a_locator_near_its_packs_expiry_is_a_miss(setup) -> None:
    blobs, _, _, clock, _ = setup
    blobs.put(BODY_A, b"x")
    clock.now += 29.5 * DAY  # the lifecycle deletes the pack at 30 days
    assert blobs.get(BODY_A) is None and not blobs.exists(BODY_A)


def test_an_old_converted_page_is_written_again_when_read_a_body_is_not(setup) -> None:
    blobs, s3, _, clock, _ = setup
    blobs.put(DOC, b"doc")
    blobs.put(BODY_A, b"body")
    clock.now += 28.5 * DAY
    s3.calls.clear()
    assert blobs.get(DOC) == b"doc" and blobs.get(BODY_A) == b"body"
    assert s3.calls["put_object"] == 1  # the document only, into a fresh pack
    clock.now += 1.0 * DAY  # the first pack is now within a day of its expiry
    assert blobs.get(DOC) == b"doc" and blobs.get(BODY_A) is None


def test_other_keys_and_the_packs_themselves_are_plain_objects(setup) -> None:
    blobs, _, _, _, aws = setup
    blobs.put("jobs/j1/template.json", b"{}")
    assert aws.s3.get_object(Bucket=aws.bucket, Key="jobs/j1/template.json")["Body"].read()
    assert packed(BODY_A) and packed(DOC)
    assert not packed("cache/bodies/packs/0123") and not packed("cache/links/abc")


def test_a_prefetch_locates_in_one_request_and_reads_neighbours_in_one_range(setup) -> None:
    blobs, s3, dynamodb, _, _ = setup
    keys = [f"cache/bodies/b{n}" for n in range(4)]
    with blobs.packing():
        for n, key in enumerate(keys):
            blobs.put(key, b"body %d" % n)
    blobs.put("cache/bodies/elsewhere", b"own pack")
    s3.calls.clear()
    dynamodb.calls.clear()
    with blobs.packing():
        blobs.prefetch([keys[3], keys[1], "cache/bodies/elsewhere", "cache/bodies/none"])
        assert dynamodb.calls == Counter(batch_get_item=1)
        assert s3.calls == Counter(get_object=2)  # one run per pack
        assert blobs.get(keys[1]) == b"body 1" and blobs.get(keys[3]) == b"body 3"
        assert blobs.get("cache/bodies/elsewhere") == b"own pack"
        assert blobs.get("cache/bodies/none") is None and not blobs.exists("cache/bodies/none")
        blobs.prefetch_locations([keys[0]])
        assert blobs.exists(keys[0])
    assert dynamodb.calls == Counter(batch_get_item=2) and s3.calls == Counter(get_object=2)


def test_a_block_past_its_memory_bound_stores_what_it_holds_early(setup, monkeypatch) -> None:
    blobs, s3, _, _, _ = setup
    monkeypatch.setattr(packs, "MAX_PENDING_BYTES", 10)
    with blobs.packing():
        blobs.put(BODY_A, b"12345678")
        assert s3.calls["put_object"] == 0
        blobs.put(BODY_B, b"12345678")  # 16 bytes held: stored now
        assert s3.calls["put_object"] == 1
        blobs.put(DOC, b"{}")
    assert s3.calls["put_object"] == 2
    assert blobs.get(BODY_A) == b"12345678" and blobs.get(DOC) == b"{}"


def test_finalize_reads_a_jobs_pages_located_together_and_neighbours_in_one_range(
    setup,
) -> None:
    from mdcrawl.adapters.aws.prefetch import PrefetchedBlobs

    blobs, s3, dynamodb, _, aws = setup
    docs = [f"cache/markdown/v1/p{n}.json" for n in range(5)]
    with blobs.packing():  # one processor invocation's pages
        for n, key in enumerate(docs):
            blobs.put(key, b"page %d" % n)
    blobs.put("jobs/j1/pages/deferred.md", b"converted at finalize")
    s3.calls.clear()
    dynamodb.calls.clear()
    keys = [*docs, "jobs/j1/pages/deferred.md", "cache/markdown/v1/none.json"]
    reads = PrefetchedBlobs(blobs, lambda: keys, workers=4)
    try:
        assert [reads.get(k) for k in docs] == [b"page %d" % n for n in range(5)]
        assert reads.get("jobs/j1/pages/deferred.md") == b"converted at finalize"
        assert reads.get("cache/markdown/v1/none.json") is None
    finally:
        reads.close()
    # One request locates every packed page; one ranged GET reads the five neighbours,
    # one GET the job's own file.
    assert dynamodb.calls == Counter(batch_get_item=1)
    assert s3.calls == Counter(get_object=2)
