"""JSON (de)serialisers for the records that cross a Lambda boundary: CrawlRequest,
CrawlResponse (with its CrawlOutcomes), CrawledPage, Scope, CrawlOptions, FrontierItem.

One generic codec driven by the dataclasses' type hints: encoding turns tuples into
lists and enums into their values; decoding rebuilds them from the hints, so a record
read back equals the record written and a new field needs no code here.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from enum import Enum
from functools import cache
from typing import Any, TypeVar

from ...models import CrawledPage, CrawlOptions, FrontierItem, Scope
from ...ports import CrawlOutcome, CrawlRequest, CrawlResponse

T = TypeVar("T")

PAYLOAD_TYPES = (
    CrawlRequest,
    CrawlResponse,
    CrawlOutcome,
    CrawledPage,
    Scope,
    CrawlOptions,
    FrontierItem,
)


def to_data(record: Any) -> Any:
    """A record (or any value inside one) as JSON-ready data."""
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return {f.name: to_data(getattr(record, f.name)) for f in dataclasses.fields(record)}
    if isinstance(record, Enum):
        return record.value
    if isinstance(record, list | tuple):
        return [to_data(v) for v in record]
    if isinstance(record, dict):
        return {str(k): to_data(v) for k, v in record.items()}
    return record


def from_data(cls: type[T], data: Any) -> T:
    """Rebuild a ``cls`` from ``to_data``'s output; unknown keys are ignored (a newer
    sender may know more fields than this reader)."""
    return typing.cast(T, _decode(cls, data))


def dumps(record: Any) -> str:
    return json.dumps(to_data(record), separators=(",", ":"))


def loads(cls: type[T], text: str | bytes) -> T:
    return from_data(cls, json.loads(text))


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(hint: Any, data: Any) -> Any:
    if data is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _decode(options[0], data) if len(options) == 1 else data
    if origin is tuple:
        item_hint = typing.get_args(hint)[0]
        return tuple(_decode(item_hint, v) for v in data)
    if origin in (list, dict) or hint is Any:
        return data
    if dataclasses.is_dataclass(hint):
        return _decode_record(hint, data)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(data)
    if hint is float and isinstance(data, int):
        return float(data)
    return data


def _decode_record(cls: Any, data: dict[str, Any]) -> Any:
    hints = _hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: _decode(hints[k], v) for k, v in data.items() if k in known})
