"""The harness's partition-only Query answers exactly what unpatched moto answers.

Two tables with the same items, one made under ``partition_queries`` (sorted
partitions, the patched query) and one without; every query below is asked of both,
page after page, and the answers (items, counts, LastEvaluatedKey) must be equal.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.support.aws import FAKE_CREDENTIALS, REGION
from tests.support.motoquery import SortedPartition, partition_queries, plain_item_bodies


def _create(client: Any, name: str, sort_type: str) -> None:
    client.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": sort_type},
            {"AttributeName": "state", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-state",
                "KeySchema": [
                    {"AttributeName": "state", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
    )


def _sort_value(sort_type: str, n: int) -> dict[str, str]:
    # Strings of varied length, so their order is not the numbers' order.
    return {"N": str(n)} if sort_type == "N" else {"S": f"k{n % 7}-{n}"}


def _fill(client: Any, names: list[str], sort_type: str) -> list[dict[str, str]]:
    """The same writes, in a shuffled order, to every table: puts, overwrites,
    deletes, across three partitions. Returns sort values present in partition a."""
    shuffle = random.Random(7)
    writes = [(pk, n) for pk in ("a", "b", "c") for n in range(40)]
    shuffle.shuffle(writes)
    for pk, n in writes:
        item = {
            "pk": {"S": pk},
            "sk": _sort_value(sort_type, n),
            "weight": {"N": str(n % 5)},
            "body": {"S": "x" * (n % 13)},
        }
        if n % 3 == 0:
            item["state"] = {"S": "pending"}
        for name in names:
            client.put_item(TableName=name, Item=item)
    for pk, n in itertools.product(("a", "b"), range(0, 40, 9)):
        key = {"pk": {"S": pk}, "sk": _sort_value(sort_type, n)}
        for name in names:
            client.delete_item(TableName=name, Key=key)
    for name in names:  # an overwrite keeps the key, changes the item
        item = {"pk": {"S": "a"}, "sk": _sort_value(sort_type, 5), "weight": {"N": "9"}}
        client.put_item(TableName=name, Item=item)
    return [_sort_value(sort_type, n) for n in (5, 17, 30, 39)]


def _conditions(sort_type: str, values: list[dict[str, str]]) -> Iterator[tuple[str, dict]]:
    """(key condition, its values) over partition a, and one over a missing partition."""
    low, mid, high, top = values
    yield "pk = :p", {":p": {"S": "a"}}
    yield "pk = :p", {":p": {"S": "nobody"}}
    for op in ("=", "<", "<=", ">", ">="):
        yield f"pk = :p AND sk {op} :v", {":p": {"S": "a"}, ":v": mid}
    yield "pk = :p AND sk BETWEEN :v AND :w", {":p": {"S": "a"}, ":v": low, ":w": high}
    yield "pk = :p AND sk > :v", {":p": {"S": "a"}, ":v": top}
    if sort_type == "S":
        yield "pk = :p AND begins_with(sk, :v)", {":p": {"S": "a"}, ":v": {"S": "k3"}}
        yield "pk = :p AND sk >= :v", {":p": {"S": "a"}, ":v": {"S": "k"}}
    else:
        yield "pk = :p AND sk > :v", {":p": {"S": "a"}, ":v": {"N": "-1.5"}}


def _pages(client: Any, name: str, request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page of the query, following LastEvaluatedKey (at most 80 pages)."""
    answers = []
    request = dict(request, TableName=name)
    for _ in range(80):
        page = client.query(**request)
        page.pop("ResponseMetadata")
        answers.append(page)
        if "LastEvaluatedKey" not in page:
            break
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return answers


def _requests(sort_type: str, values: list[dict[str, str]]) -> Iterator[dict[str, Any]]:
    extras: list[dict[str, Any]] = [
        {},
        {
            "FilterExpression": "weight > :s",
            "ExpressionAttributeValues": {":s": {"N": "2"}},
            "ProjectionExpression": "sk, body",
        },
    ]
    for (condition, bound), limit, forward, extra in itertools.product(
        _conditions(sort_type, values), (None, 1, 7), (True, False), extras
    ):
        request: dict[str, Any] = {
            "KeyConditionExpression": condition,
            "ScanIndexForward": forward,
            **extra,
            "ExpressionAttributeValues": {**bound, **extra.get("ExpressionAttributeValues", {})},
        }
        if limit is not None:
            request["Limit"] = limit
        yield request
    yield {  # an index query: moto's own path, patched or not
        "IndexName": "by-state",
        "KeyConditionExpression": "#s = :s",
        "ExpressionAttributeNames": {"#s": "state"},
        "ExpressionAttributeValues": {":s": {"S": "pending"}},
        "Limit": 4,
        "ScanIndexForward": False,
    }


@pytest.mark.parametrize("sort_type", ["N", "S"])
def test_patched_query_answers_what_moto_answers(sort_type: str) -> None:
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION, **FAKE_CREDENTIALS)
        _create(client, "plain", sort_type)
        with partition_queries():
            _create(client, "sorted", sort_type)
        values = _fill(client, ["plain", "sorted"], sort_type)
        compared = 0
        for request in _requests(sort_type, values):
            expected = _pages(client, "plain", request)
            with partition_queries():
                answered = _pages(client, "sorted", request)
            assert answered == expected, request
            compared += len(expected)
        assert compared > 200  # the product above really ran, page by page


def test_sorted_partition_keeps_keys_in_order_through_puts_and_deletes() -> None:
    from moto.dynamodb.models.dynamo_type import DynamoType

    partition = SortedPartition()
    numbers = list(range(50))
    random.Random(3).shuffle(numbers)
    for n in numbers:
        partition[DynamoType({"N": str(n)})] = n
    partition[DynamoType({"N": "7"})] = "again"  # an overwrite adds no key
    partition.pop(DynamoType({"N": "10"}))
    del partition[DynamoType({"N": "0"})]
    assert partition.pop(DynamoType({"N": "99"}), None) is None
    expected = [n for n in range(50) if n not in (0, 10)]
    assert [int(k.cast_value) for k in partition.keys_in_order] == expected
    assert len(partition) == len(expected)
    assert partition[DynamoType({"N": "7"})] == "again"


def test_pages_cut_at_one_megabyte_as_moto_cuts_them() -> None:
    """Items of ~100 KB: a page stops near 1 MB, with or without a Limit over it."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION, **FAKE_CREDENTIALS)
        _create(client, "plain", "N")
        with partition_queries():
            _create(client, "sorted", "N")
        for n in range(25):
            item = {"pk": {"S": "a"}, "sk": {"N": str(n)}, "body": {"S": "x" * 100_000}}
            for name in ("plain", "sorted"):
                client.put_item(TableName=name, Item=item)
        for forward, limit in itertools.product((True, False), (None, 20)):
            request: dict[str, Any] = {
                "KeyConditionExpression": "pk = :p AND sk >= :v",
                "ExpressionAttributeValues": {":p": {"S": "a"}, ":v": {"N": "2"}},
                "ScanIndexForward": forward,
                **({"Limit": limit} if limit else {}),
            }
            expected = _pages(client, "plain", request)
            with partition_queries():
                answered = _pages(client, "sorted", request)
            assert len(expected) >= 3  # the 1 MB cut really happened
            assert answered == expected, request


def _every_type(n: int) -> dict[str, Any]:
    return {
        "pk": {"S": "a"},
        "sk": {"N": str(n)},
        "text": {"S": f"ünïcode \"quoted\" {n}"},
        "number": {"N": "-12.50"},
        "blob": {"B": bytes([0, 255, n % 256]) * 3},
        "flag": {"BOOL": n % 2 == 0},
        "nothing": {"NULL": True},
        "strings": {"SS": ["x", "y"]},
        "numbers": {"NS": ["1", "2.5"]},
        "blobs": {"BS": [b"\x00\x01", b"\xff"]},
        "nested": {"M": {"list": {"L": [{"S": "s"}, {"N": "3"}, {"B": b"\x10"},
                                        {"M": {"deep": {"BOOL": False}}}]}}},
    }


def test_plain_item_bodies_answer_what_moto_serializes() -> None:
    """Query, Scan, GetItem (and a write, left to moto) answer the same with
    ``plain_item_bodies``: every attribute type, binary included."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION, **FAKE_CREDENTIALS)
        _create(client, "plain", "N")
        for n in range(6):
            client.put_item(TableName="plain", Item=_every_type(n))
        calls = [
            ("query", {"KeyConditionExpression": "pk = :p", "Limit": 4,
                       "ExpressionAttributeValues": {":p": {"S": "a"}}}),
            ("scan", {}),
            ("get_item", {"Key": {"pk": {"S": "a"}, "sk": {"N": "3"}}}),
            ("get_item", {"Key": {"pk": {"S": "a"}, "sk": {"N": "99"}}}),
            ("update_item", {"Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
                             "UpdateExpression": "SET flag = :f", "ReturnValues": "ALL_NEW",
                             "ExpressionAttributeValues": {":f": {"BOOL": True}}}),
        ]
        for operation, request in calls:
            expected = getattr(client, operation)(TableName="plain", **request)
            with plain_item_bodies():
                answered = getattr(client, operation)(TableName="plain", **request)
            for answer in (expected, answered):
                answer.pop("ResponseMetadata")
            assert answered == expected, operation
        assert expected["Attributes"]["blob"]["B"] == bytes([0, 255, 1]) * 3
