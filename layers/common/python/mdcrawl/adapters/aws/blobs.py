"""S3BlobStore: bytes by key in one bucket; large objects streamed with multipart upload."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, BinaryIO, cast
from urllib.parse import quote

from botocore.exceptions import ClientError

from ...errors import StoreError
from .calls import call, call_unless, error_code
from .multipart import MIN_PART_SIZE, MultipartWriter

_MISSING = ("NoSuchKey", "404", "NotFound")
# S3 answers a read of a missing key with 403 when the caller may not s3:ListBucket the
# bucket: never taken for "missing" (it would hide a real permission error), but named.
_FORBIDDEN = ("AccessDenied", "403", "Forbidden")


class S3BlobStore:
    """``refresh``: ``(prefix, after_s)`` pairs. A read of an object under ``prefix``
    older than ``after_s`` copies it onto itself, which restarts its lifecycle clock:
    S3 expires cache objects by age since their last write, and a job's page record
    points at the markdown cache's document (``stored.py``), so a document a job reads
    must outlive the job (``after_s`` leaves days of margin before the expiry)."""

    def __init__(
        self,
        client: Any,
        bucket: str,
        part_size: int = 8 * 1024 * 1024,
        refresh: tuple[tuple[str, float], ...] = (),
    ) -> None:
        if part_size < MIN_PART_SIZE:
            raise ValueError(f"S3 parts (but the last) must be at least {MIN_PART_SIZE} bytes")
        self._client = client
        self._bucket = bucket
        self._part_size = part_size
        self._refresh = refresh

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        call(
            self._client.put_object,
            Bucket=self._bucket,
            Key=key,
            Body=data,
            ContentType=content_type,
        )

    def get(self, key: str) -> bytes | None:
        answer = self._unless_missing(self._client.get_object, key)
        if answer is None:
            return None
        data = cast(bytes, answer["Body"].read())
        if self._too_old(key, answer.get("LastModified")):
            self._rewrite(key, answer.get("ContentType") or "application/octet-stream")
        return data

    def get_range(self, key: str, offset: int, length: int) -> bytes | None:
        """``length`` bytes of the object from ``offset`` (one ranged GET), or None when
        the object does not exist."""
        if length <= 0:
            return b""
        answer = self._unless_missing(
            self._client.get_object, key, Range=f"bytes={offset}-{offset + length - 1}"
        )
        return None if answer is None else cast(bytes, answer["Body"].read())

    def _too_old(self, key: str, written: datetime | None) -> bool:
        if written is None:
            return False
        age = (datetime.now(UTC) - written).total_seconds()
        return any(key.startswith(prefix) and age > after for prefix, after in self._refresh)

    def _rewrite(self, key: str, content_type: str) -> None:
        """The object copied onto itself (same bytes, a new last-modified date)."""
        call(
            self._client.copy_object,
            Bucket=self._bucket,
            Key=key,
            CopySource={"Bucket": self._bucket, "Key": key},
            MetadataDirective="REPLACE",
            ContentType=content_type,
        )

    def exists(self, key: str) -> bool:
        return self._unless_missing(self._client.head_object, key) is not None

    def _unless_missing(self, operation: Any, key: str, **extra: Any) -> Any | None:
        """The call's answer, or None when the key does not exist."""
        try:
            return call_unless(operation, _MISSING, Bucket=self._bucket, Key=key, **extra)
        except StoreError as exc:
            cause = exc.__cause__
            if isinstance(cause, ClientError) and error_code(cause) in _FORBIDDEN:
                raise StoreError(
                    f"{key}: access denied (a missing key reads as 403 unless the role may "
                    "s3:ListBucket the bucket, see infra/access.py)"
                ) from cause
            raise

    @contextmanager
    def writer(
        self, key: str, content_type: str = "text/markdown; charset=utf-8"
    ) -> Iterator[BinaryIO]:
        """Memory holds at most one part; nothing is visible under ``key`` unless the
        block ends without an exception (the multipart upload is aborted otherwise)."""
        out = MultipartWriter(self._client, self._bucket, key, content_type, self._part_size)
        try:
            yield cast(BinaryIO, out)
            out.complete()
        except BaseException:
            out.abort_quietly()
            raise

    def link(self, key: str, expires_s: int = 900, filename: str | None = None) -> str:
        params = {"Bucket": self._bucket, "Key": key}
        if filename:
            params["ResponseContentDisposition"] = content_disposition(filename)
        return cast(
            str,
            call(
                self._client.generate_presigned_url,
                ClientMethod="get_object",
                Params=params,
                ExpiresIn=expires_s,
            ),
        )


def content_disposition(filename: str) -> str:
    """``attachment`` with an ASCII fallback name plus the exact UTF-8 name (RFC 6266)."""
    fallback = "".join(_ascii_or_underscore(c) for c in filename)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def _ascii_or_underscore(char: str) -> str:
    return char if char.isascii() and char.isprintable() and char not in '"\\' else "_"
