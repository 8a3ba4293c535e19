"""moto's DynamoDB Query read from the partition alone, as DynamoDB reads it.

moto 5.2.5 answers a base-table Query by sorting every item of the table
(``Table.all_items``), keeping the queried partition, sorting it again and walking it:
a ``Limit=1`` reverse Query for a job's last event (``DynamoDbEventLog._last_seq``) costs
a sort of the whole events table. On DynamoDB the same request reads one item. Under the
scale harness that fidelity gap dominated a 10,000-page run (py-spy: 268 of 591 samples
in ``_last_seq`` at 4,865 pages), so ``partition_queries()`` patches it in the served
moto (``served_moto``) only:

- each partition of a table with a sort key is a ``SortedPartition``: the items by sort
  key, as before, plus the sort keys kept in order (a bisect per new key);
- a base-table Query picks its window by bisect (key condition, ``ExclusiveStartKey``,
  direction, at most ``Limit + 1`` matching items) and hands only that window to moto's
  own ``Table.query``, which does everything else exactly as before (order, limit, 1 MB
  page, ``LastEvaluatedKey``, filter, projection).

Index queries, legacy ``KeyConditions``/``QueryFilter`` requests, multi-attribute keys
and anything unexpected go to moto unchanged.

``plain_item_bodies()``: moto serializes every response through botocore's shape
model, attribute by attribute; for a Query page of 1 MB of page records that took ~3 s
on the shared machine (py-spy: 366 of 381 DynamoDB samples in ``ResponseSerializer``,
a 10,000-record listing 240 s). The items of Query, Scan and GetItem answers are
already DynamoDB's wire format, so they are written with ``json.dumps`` (binary values
base64, as the serializer writes them) and the rest of the answer by moto.

``tests/unit/test_motoquery.py`` checks that patched and unpatched moto answer
identically.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import copy
import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any
from unittest import mock

from moto.core.responses import ActionContext, ActionResult
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import RESULT_SIZE_LIMIT, Table
from moto.dynamodb.responses import DynamoResult

_ORIGINAL_QUERY = Table.query
_ORIGINAL_INIT = Table.__init__


class SortedPartition(dict):  # type: ignore[type-arg]
    """One partition: sort key -> item (what moto stores), with the keys' values kept
    sorted in ``order`` (moto orders by ``DynamoType.cast_value``; so does this)."""

    def __init__(self) -> None:
        super().__init__()
        self.keys_in_order: list[DynamoType] = []
        self.order: list[Any] = []

    def __setitem__(self, key: DynamoType, item: Any) -> None:
        if key not in self:
            at = bisect.bisect_left(self.order, key.cast_value)
            self.order.insert(at, key.cast_value)
            self.keys_in_order.insert(at, key)
        super().__setitem__(key, item)

    def __delitem__(self, key: DynamoType) -> None:
        super().__delitem__(key)
        self._forget(key)

    def pop(self, key: DynamoType, *default: Any) -> Any:
        if key not in self:
            return super().pop(key, *default)
        self._forget(key)
        return super().pop(key)

    def _forget(self, key: DynamoType) -> None:
        at = bisect.bisect_left(self.order, key.cast_value)
        del self.order[at], self.keys_in_order[at]

    def __deepcopy__(self, memo: dict[int, Any]) -> SortedPartition:  # backups, restores
        twin = SortedPartition()
        for key, item in self.items():
            twin[copy.deepcopy(key, memo)] = copy.deepcopy(item, memo)
        return twin

    def _unsupported(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("SortedPartition: moto only sets, pops and deletes items")

    update = setdefault = popitem = clear = _unsupported  # type: ignore[assignment]


# Key-condition operators that bound a contiguous run of sort keys: (lower, upper) of
# the run as bisect positions, from the condition's values. Others (begins_with) are
# applied item by item over the partition.
_BOUNDS = {
    "=": lambda order, v: (bisect.bisect_left(order, v[0]), bisect.bisect_right(order, v[0])),
    "<": lambda order, v: (0, bisect.bisect_left(order, v[0])),
    "<=": lambda order, v: (0, bisect.bisect_right(order, v[0])),
    ">": lambda order, v: (bisect.bisect_right(order, v[0]), len(order)),
    ">=": lambda order, v: (bisect.bisect_left(order, v[0]), len(order)),
    "BETWEEN": lambda order, v: (bisect.bisect_left(order, v[0]), bisect.bisect_right(order, v[1])),
}
_BOUNDS.update({"EQ": _BOUNDS["="], "LT": _BOUNDS["<"], "LE": _BOUNDS["<="]})
_BOUNDS.update({"GT": _BOUNDS[">"], "GE": _BOUNDS[">="]})


def _init(self: Table, *args: Any, **kwargs: Any) -> None:
    _ORIGINAL_INIT(self, *args, **kwargs)
    if self.range_key_attr:
        self.items = defaultdict(SortedPartition)


def _query(
    self: Table,
    hash_key: DynamoType | None,
    range_comparison: str | None,
    range_objs: list[DynamoType],
    limit: int,
    exclusive_start_key: dict[str, Any],
    scan_index_forward: bool,
    *args: Any,
    **kwargs: Any,
) -> Any:
    call = (hash_key, range_comparison, range_objs, limit, exclusive_start_key,
            scan_index_forward, *args)
    window = _window(self, *call[:6], args, kwargs)
    if window is None:
        return _ORIGINAL_QUERY(self, *call, **kwargs)
    # moto's query reads the partition through all_items(): give it the window only.
    self.all_items = lambda: window  # type: ignore[method-assign]
    try:
        return _ORIGINAL_QUERY(self, *call, **kwargs)
    finally:
        del self.all_items


def _window(
    table: Table,
    hash_key: DynamoType | None,
    range_comparison: str | None,
    range_objs: list[DynamoType],
    limit: int | None,
    exclusive_start_key: dict[str, Any] | None,
    forward: bool,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> list[Any] | None:
    """The items moto's query would walk, in ascending order, or None: let moto do it."""
    index_name = args[1] if len(args) > 1 else kwargs.get("index_name")
    filter_kwargs = {k: v for k, v in kwargs.items() if k not in _NAMED_QUERY_ARGS}
    conditions = kwargs.get("range_key_conditions") or []
    if index_name or filter_kwargs or hash_key is None or len(conditions) > 1:
        return None
    partition = table.items.get(hash_key)
    if partition is None:
        return [] if table.range_key_attr else None
    if not isinstance(partition, SortedPartition):
        return None
    try:
        lower, upper = _bounds(partition.order, range_comparison, range_objs)
        walk = _after_start_key(table, hash_key, partition, exclusive_start_key, forward)
    except (TypeError, KeyError, IndexError):  # odd types or keys: moto's own answer
        return None
    return _matching(partition, walk, (lower, upper), range_comparison, range_objs, limit,
                     forward)


_NAMED_QUERY_ARGS = {
    "projection_expressions", "index_name", "consistent_read", "filter_expression",
    "hash_key_conditions", "range_key_conditions",
}


def _bounds(order: list[Any], comparison: str | None, objs: list[DynamoType]) -> tuple[int, int]:
    bound = _BOUNDS.get(comparison or "")
    if bound is None:
        return 0, len(order)
    return bound(order, [obj.cast_value for obj in objs])  # type: ignore[no-any-return]


def _after_start_key(
    table: Table,
    hash_key: DynamoType,
    partition: SortedPartition,
    start_key: dict[str, Any] | None,
    forward: bool,
) -> range:
    """The positions moto walks: the partition less what the previous page returned,
    keys up to the start key (down to, in reverse), as ``_item_comes_before_dct``."""
    if not start_key:
        return range(len(partition.order))
    if DynamoType(start_key[table.hash_key_attr]) != hash_key:
        raise KeyError("start key of another partition")
    start = DynamoType(start_key[table.range_key_attr]).cast_value
    if forward:
        return range(bisect.bisect_right(partition.order, start), len(partition.order))
    return range(bisect.bisect_left(partition.order, start))


def _matching(
    partition: SortedPartition,
    walk: range,
    bounds: tuple[int, int],
    comparison: str | None,
    objs: list[DynamoType],
    limit: int | None,
    forward: bool,
) -> list[Any]:
    """The items passing the key condition within ``bounds``, walked in the query's
    direction, at most ``limit``, then the next item of the walk whatever it is: moto
    stops there and sets ``LastEvaluatedKey`` (so does DynamoDB, at the limit). Also
    stops at the first item past the 1 MB a page holds (moto stops at it too: a whole
    partition paged through is then read once, not once per page). Ascending order."""
    lower, upper = max(bounds[0], walk.start), min(bounds[1], walk.stop)
    positions = range(lower, max(lower, upper))
    chosen = []
    size = 0
    for at in positions if forward else reversed(positions):
        if limit is not None and len(chosen) == limit:
            chosen.append(partition[partition.keys_in_order[at]])  # moto stops here
            break
        item = partition[partition.keys_in_order[at]]
        if comparison and not item.range_key.compare(comparison, objs):
            continue
        chosen.append(item)
        size += item.size()
        if size > RESULT_SIZE_LIMIT:
            break
    else:
        nxt = (positions.stop if forward else positions.start - 1) if positions else None
        if limit is not None and len(chosen) == limit and nxt is not None and nxt in walk:
            chosen.append(partition[partition.keys_in_order[nxt]])
    return chosen if forward else chosen[::-1]


@contextlib.contextmanager
def partition_queries() -> Iterator[None]:
    """Tables created inside keep sorted partitions; base-table queries read them."""
    with mock.patch.object(Table, "__init__", _init), mock.patch.object(Table, "query", _query):
        yield


_ITEM_KEYS = ("Items", "Item")  # Query / Scan pages, GetItem


def _execute_result(self: DynamoResult, context: ActionContext) -> Any:
    result = self.result
    if not isinstance(result, dict) or not any(key in result for key in _ITEM_KEYS):
        return ActionResult.execute_result(self, context)
    rest = ActionResult({k: v for k, v in result.items() if k not in _ITEM_KEYS})
    status, headers, body = rest.execute_result(context)
    answer = json.loads(body)
    answer.update({key: result[key] for key in _ITEM_KEYS if key in result})
    return status, headers, json.dumps(answer, default=_base64)


def _base64(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    raise TypeError(f"not in an item's wire format: {type(value).__name__}")


@contextlib.contextmanager
def plain_item_bodies() -> Iterator[None]:
    """Items in DynamoDB answers written by ``json.dumps``, not the shape serializer."""
    with mock.patch.object(DynamoResult, "execute_result", _execute_result):
        yield
