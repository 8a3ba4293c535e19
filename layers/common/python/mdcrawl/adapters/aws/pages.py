"""DynamoDbPageStore: one record per (job, page), written once (a retried processor
event finds the record there and changes nothing)."""

from __future__ import annotations

from typing import Any

from ...models import PageRecord
from ...names import TTL_ATTRIBUTE
from ...ports import Clock
from .cache import batch_get_items
from .calls import call
from .dynamo import Expr, expires_at, from_item, put_if_new, query_all
from .records import page_from_attrs, page_to_attrs


class DynamoDbPageStore:
    def __init__(
        self, client: Any, table: str, clock: Clock, retention_s: float | None = None
    ) -> None:
        self._client = client
        self._table = table
        self._clock = clock  # stamps the TTL
        self._retention_s = retention_s

    def put(self, page: PageRecord) -> bool:
        attrs = page_to_attrs(page)
        attrs[TTL_ATTRIBUTE] = expires_at(self._clock.now(), self._retention_s)
        return put_if_new(self._client, self._table, attrs, "url_hash")

    def get(self, job_id: str, url_hash: str) -> PageRecord | None:
        found = call(
            self._client.get_item,
            TableName=self._table,
            Key={"job_id": {"S": job_id}, "url_hash": {"S": url_hash}},
            ConsistentRead=True,
        )
        return page_from_attrs(from_item(found["Item"])) if "Item" in found else None

    def get_many(self, job_id: str, url_hashes: list[str]) -> dict[str, PageRecord | None]:
        """``get`` of each (a processor batch's pages), in BatchGetItem requests of 100:
        one request where a batch of 6 pages made 6."""
        keys = [
            {"job_id": {"S": job_id}, "url_hash": {"S": h}} for h in dict.fromkeys(url_hashes)
        ]
        found: dict[str, PageRecord | None] = dict.fromkeys(url_hashes)
        for item in batch_get_items(self._client, self._table, keys, consistent=True):
            record = page_from_attrs(from_item(item))
            found[record.url_hash] = record
        return found

    def list(self, job_id: str) -> list[PageRecord]:
        expr = Expr()
        rows = query_all(
            self._client,
            TableName=self._table,
            KeyConditionExpression=f"{expr.name('job_id')} = {expr.value(job_id)}",
            ConsistentRead=True,
            **expr.kwargs(),
        )
        pages = [page_from_attrs(row) for row in rows]
        return sorted(pages, key=lambda page: (page.order, page.url_hash))
