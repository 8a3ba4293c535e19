"""What every DynamoDB adapter shares: value (de)serialisation, expression placeholders,
paginated queries.

Adapters talk to the low-level client (injected), so they work with a client from any
session, endpoint (DynamoDB Local) or moto, and never build one themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from enum import Enum
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from .calls import call, call_if

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def _prepare(value: Any) -> Any:
    """Python value -> what TypeSerializer accepts (it refuses float; tuples become lists)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, float):
        return Decimal(repr(value))  # repr is the shortest exact round-trip form
    if isinstance(value, Mapping):
        return {str(k): _prepare(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_prepare(v) for v in value]
    return value


def _restore(value: Any) -> Any:
    """DynamoDB value -> plain Python: Decimal back to int or float, recursively."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v) for v in value]
    return value


def serialize(value: Any) -> dict[str, Any]:
    return _serializer.serialize(_prepare(value))


def to_item(values: Mapping[str, Any]) -> dict[str, Any]:
    """A plain dict -> a DynamoDB item. Top-level None is left out (absent, not NULL),
    so optional attributes really are missing (and a sparse index skips the item)."""
    return {k: serialize(v) for k, v in values.items() if v is not None}


def from_item(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _restore(_deserializer.deserialize(v)) for k, v in item.items()}


class Expr:
    """Placeholders for one request's expressions: every attribute name goes through
    ``#nX`` (so reserved words like ``status``, ``order``, ``owner`` are safe)."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._values: dict[str, Any] = {}

    def name(self, attribute: str) -> str:
        if attribute not in self._names:
            self._names[attribute] = f"#n{len(self._names)}"
        return self._names[attribute]

    def value(self, value: Any) -> str:
        placeholder = f":v{len(self._values)}"
        self._values[placeholder] = serialize(value)
        return placeholder

    def update(
        self,
        set_: Mapping[str, Any] = (),  # type: ignore[assignment]
        add: Mapping[str, int] = (),  # type: ignore[assignment]
        remove: Iterable[str] = (),
    ) -> str:
        """An UpdateExpression; a None in ``set_`` becomes a REMOVE (absent, not NULL)."""
        set_ = dict(set_)
        removed = [*remove, *(k for k, v in set_.items() if v is None)]
        clauses = []
        assigned = [f"{self.name(k)} = {self.value(v)}" for k, v in set_.items() if v is not None]
        if assigned:
            clauses.append("SET " + ", ".join(assigned))
        if added := [f"{self.name(k)} {self.value(v)}" for k, v in dict(add).items()]:
            clauses.append("ADD " + ", ".join(added))
        if removed:
            clauses.append("REMOVE " + ", ".join(self.name(k) for k in removed))
        return " ".join(clauses)

    def kwargs(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self._names:
            out["ExpressionAttributeNames"] = {v: k for k, v in self._names.items()}
        if self._values:
            out["ExpressionAttributeValues"] = dict(self._values)
        return out


def query_all(client: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Every item a Query returns, following LastEvaluatedKey, as plain dicts."""
    while True:
        page = call(client.query, **kwargs)
        yield from (from_item(item) for item in page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def expires_at(start: float, retention_s: float | None) -> int | None:
    """The TTL attribute's value (epoch seconds, an integer as DynamoDB TTL wants)."""
    return None if retention_s is None else int(start + retention_s)


def put_if_new(client: Any, table: str, attrs: Mapping[str, Any], key: str) -> bool:
    """Write the item unless one with the same ``key`` attribute exists (a conditional
    put): True when this call wrote it, False when it was already there."""
    written = call_if(
        client.put_item,
        TableName=table,
        Item=to_item(attrs),
        ConditionExpression=f"attribute_not_exists({key})",
    )
    return written is not None
