"""S3BlobStore under moto: put/get/exists, streamed multipart writes, pre-signed links."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from mdcrawl.adapters.aws.blobs import S3BlobStore
from mdcrawl.adapters.aws.multipart import MIN_PART_SIZE
from mdcrawl.errors import StoreError

from tests.support.aws import moto_clients

MiB = 1024 * 1024


class RecordingS3:
    """The real (moto) client, with the size of every body it was asked to send."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.sent: list[tuple[str, int]] = []

    def __getattr__(self, name: str) -> Any:
        operation = getattr(self._client, name)
        if name not in ("put_object", "upload_part"):
            return operation

        def recorded(**kwargs: Any) -> Any:
            self.sent.append((name, len(kwargs["Body"])))
            return operation(**kwargs)

        recorded.__name__ = name
        return recorded


@pytest.fixture
def aws():
    with moto_clients() as aws:
        yield aws


@pytest.fixture
def s3(aws):
    return RecordingS3(aws.s3)


@pytest.fixture
def blobs(aws, s3):
    return S3BlobStore(s3, aws.bucket, part_size=MIN_PART_SIZE)


def test_put_get_exists(blobs):
    assert blobs.get("a/b.md") is None and blobs.exists("a/b.md") is False
    blobs.put("a/b.md", b"# hello", "text/markdown")
    assert blobs.get("a/b.md") == b"# hello" and blobs.exists("a/b.md") is True


def test_other_s3_errors_are_store_errors(aws):
    with pytest.raises(StoreError):
        S3BlobStore(aws.s3, "no-such-bucket-here").put("k", b"x")


def test_writer_streams_a_large_object_in_parts_of_bounded_size(blobs, s3, aws):
    chunk = bytes(range(256)) * (4 * 1024)  # 1 MiB
    with blobs.writer("jobs/j/docs.md") as out:
        for _ in range(12):
            out.write(chunk)
    # Never more than one part in memory: 12 MiB went out as 5 + 5 + 2, no single PUT.
    assert s3.sent == [("upload_part", 5 * MiB), ("upload_part", 5 * MiB), ("upload_part", 2 * MiB)]
    assert blobs.get("jobs/j/docs.md") == chunk * 12
    head = aws.s3.head_object(Bucket=aws.bucket, Key="jobs/j/docs.md")
    assert head["ContentType"] == "text/markdown; charset=utf-8"
    assert head["ETag"].endswith('-3"')


def test_a_small_object_is_one_put_and_no_multipart_upload(blobs, s3, aws):
    with blobs.writer("small.md", content_type="text/plain") as out:
        out.write(b"tiny")
    assert s3.sent == [("put_object", 4)]
    assert blobs.get("small.md") == b"tiny"
    assert "Uploads" not in aws.s3.list_multipart_uploads(Bucket=aws.bucket)


def test_an_exact_multiple_of_the_part_size_sends_no_empty_part(blobs, s3):
    with blobs.writer("exact.md") as out:
        out.write(b"x" * (2 * MIN_PART_SIZE))
    assert [size for _, size in s3.sent] == [MIN_PART_SIZE, MIN_PART_SIZE]
    assert len(blobs.get("exact.md")) == 2 * MIN_PART_SIZE


def test_an_error_aborts_the_upload_and_leaves_nothing_behind(blobs, aws):
    with pytest.raises(RuntimeError, match="converter broke"), blobs.writer("half.md") as out:
        out.write(b"x" * (MIN_PART_SIZE + 10))  # one part already uploaded
        raise RuntimeError("converter broke")
    assert blobs.exists("half.md") is False
    assert "Uploads" not in aws.s3.list_multipart_uploads(Bucket=aws.bucket)


def test_writing_after_the_block_is_refused(blobs):
    with blobs.writer("done.md") as out:
        out.write(b"a")
    with pytest.raises(ValueError):
        out.write(b"b")


def test_link_is_a_presigned_get_that_names_the_download(blobs):
    blobs.put("jobs/j/docs.md", b"# docs")
    url = blobs.link("jobs/j/docs.md", expires_s=60, filename='docs "v2" é.md')
    assert "Expires=" in url or "X-Amz-Expires=60" in url
    answer = requests.get(url, timeout=5)
    assert answer.status_code == 200 and answer.content == b"# docs"
    disposition = answer.headers["Content-Disposition"]
    assert disposition.startswith('attachment; filename="docs _v2_ _.md"')
    assert "filename*=UTF-8''docs%20%22v2%22%20%C3%A9.md" in disposition


def test_part_size_below_the_s3_minimum_is_refused(aws):
    with pytest.raises(ValueError):
        S3BlobStore(aws.s3, aws.bucket, part_size=MiB)


def test_access_denied_on_a_read_is_an_error_that_names_list_bucket() -> None:
    """Without s3:ListBucket, S3 answers a missing key 403: never read as 'missing'."""
    from botocore.exceptions import ClientError

    class Forbidden:
        def head_object(self, **_: Any) -> Any:
            raise ClientError({"Error": {"Code": "403", "Message": "Forbidden"}}, "HeadObject")

        get_object = head_object

    store = S3BlobStore(Forbidden(), "bucket")
    for read in (store.exists, store.get):
        with pytest.raises(StoreError, match="s3:ListBucket"):
            read("cache/bodies/abc")


class CountingS3:
    """The real (moto) client, counting the copies it was asked to make."""

    def __init__(self, client: Any) -> None:
        self._client, self.copies = client, 0

    def __getattr__(self, name: str) -> Any:
        operation = getattr(self._client, name)
        if name != "copy_object":
            return operation

        def counted(**kwargs: Any) -> Any:
            self.copies += 1
            return operation(**kwargs)

        counted.__name__ = name
        return counted


@pytest.mark.parametrize(("after_s", "copies"), [(-1.0, 1), (86400.0, 0)])
def test_an_old_cache_object_is_rewritten_when_read(aws, after_s: float, copies: int) -> None:
    """A job's record points at the markdown cache's document: a read of one close to its
    lifecycle expiry restarts its clock (same bytes, same type); a young one is left."""
    s3 = CountingS3(aws.session.client("s3"))
    blobs = S3BlobStore(s3, aws.bucket, refresh=(("cache/markdown/", after_s),))
    blobs.put("cache/markdown/v1/a.json", b'{"markdown": "# A"}', "application/json")
    blobs.put("jobs/j/template.json", b"{}", "application/json")
    assert blobs.get("cache/markdown/v1/a.json") == b'{"markdown": "# A"}'
    assert blobs.get("jobs/j/template.json") == b"{}"  # another prefix: never rewritten
    assert s3.copies == copies
    head = aws.session.client("s3").head_object(Bucket=aws.bucket, Key="cache/markdown/v1/a.json")
    assert head["ContentType"] == "application/json"
    assert blobs.get("cache/markdown/v1/a.json") == b'{"markdown": "# A"}'
