"""DynamoDbConnectionStore: WebSocket connections and their job subscriptions.

Items (see schema.py): ``(connection_id, "#conn")`` holds the owner; one
``(connection_id, job_id)`` item per subscription carries ``sub_job`` so the
``by_job`` index lists a job's subscribers without a scan.
"""

from __future__ import annotations

from typing import Any

from ...names import CONNECTIONS_JOB_INDEX, TTL_ATTRIBUTE
from ...ports import Clock, iter_chunks
from .calls import call
from .dynamo import Expr, expires_at, query_all, to_item

CONNECTION_SK = "#conn"  # job ids never start with '#'
DEFAULT_RETENTION_S = 2 * 3600.0  # API Gateway closes a WebSocket after 2 hours
_BATCH_WRITE = 25  # BatchWriteItem's limit


class DynamoDbConnectionStore:
    def __init__(
        self, client: Any, table: str, clock: Clock, retention_s: float = DEFAULT_RETENTION_S
    ) -> None:
        self._client = client
        self._table = table
        self._clock = clock  # stamps the TTL of subscriptions
        self._retention_s = retention_s

    def add(self, connection_id: str, owner: str, ts: float) -> None:
        attrs = {"connection_id": connection_id, "sk": CONNECTION_SK, "owner": owner, "ts": ts}
        self._put(attrs, ts)

    def subscribe(self, connection_id: str, job_id: str) -> None:
        attrs = {"connection_id": connection_id, "sk": job_id, "sub_job": job_id}
        self._put(attrs, self._clock.now())

    def owner(self, connection_id: str) -> str | None:
        found = call(
            self._client.get_item,
            TableName=self._table,
            Key=_key(connection_id, CONNECTION_SK),
            ConsistentRead=True,
        )
        return found["Item"]["owner"]["S"] if "Item" in found else None

    def for_job(self, job_id: str) -> list[str]:
        expr = Expr()
        rows = query_all(
            self._client,
            TableName=self._table,
            IndexName=CONNECTIONS_JOB_INDEX,
            KeyConditionExpression=f"{expr.name('sub_job')} = {expr.value(job_id)}",
            **expr.kwargs(),
        )
        return sorted({row["connection_id"] for row in rows})

    def remove(self, connection_id: str) -> None:
        expr = Expr()
        rows = query_all(
            self._client,
            TableName=self._table,
            KeyConditionExpression=f"{expr.name('connection_id')} = {expr.value(connection_id)}",
            ProjectionExpression=f"{expr.name('connection_id')}, {expr.name('sk')}",
            ConsistentRead=True,
            **expr.kwargs(),
        )
        keys = [_key(row["connection_id"], row["sk"]) for row in rows]
        for chunk in iter_chunks(keys, _BATCH_WRITE):
            self._delete_all([{"DeleteRequest": {"Key": key}} for key in chunk])

    def _delete_all(self, requests: list[dict[str, Any]]) -> None:
        pending: dict[str, Any] = {self._table: requests}
        while pending:
            answer = call(self._client.batch_write_item, RequestItems=pending)
            pending = answer.get("UnprocessedItems") or {}

    def _put(self, attrs: dict[str, Any], ts: float) -> None:
        attrs[TTL_ATTRIBUTE] = expires_at(ts, self._retention_s)
        call(self._client.put_item, TableName=self._table, Item=to_item(attrs))


def _key(connection_id: str, sk: str) -> dict[str, Any]:
    return {"connection_id": {"S": connection_id}, "sk": {"S": sk}}
