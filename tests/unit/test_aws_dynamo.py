"""The shared DynamoDB plumbing: value round trips, placeholders, error translation."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from mdcrawl.adapters.aws.calls import call, call_if, call_unless
from mdcrawl.adapters.aws.dynamo import Expr, expires_at, from_item, to_item
from mdcrawl.errors import StoreError
from mdcrawl.models import UrlState


def _raise(code: str):
    def operation(**_: object) -> None:
        raise ClientError({"Error": {"Code": code, "Message": "m"}}, "Op")

    return operation


def test_values_round_trip_with_floats_ints_nested_maps_and_lists():
    values = {"f": 0.1, "i": 3, "b": True, "m": {"x": [1.5, None, "s"]}, "t": ("a", "b")}
    assert from_item(to_item(values)) == {**values, "t": ["a", "b"]}


def test_top_level_none_is_absent_and_enums_are_their_value():
    item = to_item({"pending_pk": None, "state": UrlState.PENDING})
    assert item == {"state": {"S": "pending"}}


def test_update_turns_none_into_remove_and_names_every_attribute():
    expr = Expr()
    update = expr.update(set_={"status": "x", "error": None}, add={"n": 1}, remove=["lease"])
    names = expr.kwargs()["ExpressionAttributeNames"]
    assert update == "SET #n0 = :v0 ADD #n1 :v1 REMOVE #n2, #n3"
    assert names == {"#n0": "status", "#n1": "n", "#n2": "lease", "#n3": "error"}


def test_a_failed_condition_is_an_answer_other_errors_are_store_errors():
    assert call_if(_raise("ConditionalCheckFailedException")) is None
    with pytest.raises(StoreError, match="ProvisionedThroughputExceededException"):
        call_if(_raise("ProvisionedThroughputExceededException"))
    with pytest.raises(StoreError):
        call(_raise("ConditionalCheckFailedException"))
    assert call_unless(_raise("NoSuchKey"), ("NoSuchKey",)) is None


def test_network_errors_become_store_errors():
    def unreachable(**_: object) -> None:
        raise EndpointConnectionError(endpoint_url="http://127.0.0.1:1")

    with pytest.raises(StoreError):
        call(unreachable)


def test_expires_at_is_whole_seconds_or_absent():
    assert expires_at(100.7, 10.0) == 110
    assert expires_at(100.0, None) is None
