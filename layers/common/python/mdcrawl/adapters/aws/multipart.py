"""A write-only file object over an S3 multipart upload.

Bytes collect in a buffer; each time it holds a full part, the part is uploaded and
dropped, so a 100 MB document needs one part of memory, not 100 MB. An object that
never fills a part is sent with one PutObject (no multipart upload is ever opened).
"""

from __future__ import annotations

import io
from typing import Any

from ...errors import StoreError
from .calls import call

MIN_PART_SIZE = 5 * 1024 * 1024  # S3's floor for every part but the last


class MultipartWriter(io.RawIOBase):
    def __init__(self, client: Any, bucket: str, key: str, content_type: str, part_size: int):
        super().__init__()
        self._client = client
        self._target = {"Bucket": bucket, "Key": key}
        self._content_type = content_type
        self._part_size = part_size
        self._buffer = bytearray()
        self._upload_id: str | None = None
        self._parts: list[dict[str, Any]] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self.closed:
            raise ValueError("write to a finished upload")
        view = memoryview(data).cast("B")
        self._buffer += view
        while len(self._buffer) >= self._part_size:
            self._upload_part(bytes(self._buffer[: self._part_size]))
            del self._buffer[: self._part_size]
        return len(view)

    def complete(self) -> None:
        """Send what is left and make the object visible."""
        if self._upload_id is None:
            call(
                self._client.put_object,
                **self._target,
                Body=bytes(self._buffer),
                ContentType=self._content_type,
            )
        else:
            if self._buffer or not self._parts:
                self._upload_part(bytes(self._buffer))
            call(
                self._client.complete_multipart_upload,
                **self._target,
                UploadId=self._upload_id,
                MultipartUpload={"Parts": self._parts},
            )
        self._buffer.clear()
        super().close()

    def abort(self) -> None:
        """Drop the upload so its parts neither linger nor cost storage."""
        self._buffer.clear()
        if self._upload_id is not None:
            call(self._client.abort_multipart_upload, **self._target, UploadId=self._upload_id)
            self._upload_id = None
        super().close()

    def abort_quietly(self) -> None:
        """Abort while another error is on its way out: that error is the one to report,
        so a failing abort is not allowed to replace it (the bucket's lifecycle rule for
        incomplete uploads cleans up after it)."""
        try:
            self.abort()
        except StoreError:
            self._upload_id = None
            super().close()

    def close(self) -> None:
        # The context manager decides between complete() and abort(); a plain close()
        # from a wrapper (io.TextIOWrapper) must not finish the object early.
        pass

    def _upload_part(self, body: bytes) -> None:
        if self._upload_id is None:
            started = call(
                self._client.create_multipart_upload,
                **self._target,
                ContentType=self._content_type,
            )
            self._upload_id = started["UploadId"]
        number = len(self._parts) + 1
        sent = call(
            self._client.upload_part,
            **self._target,
            UploadId=self._upload_id,
            PartNumber=number,
            Body=body,
        )
        self._parts.append({"PartNumber": number, "ETag": sent["ETag"]})
