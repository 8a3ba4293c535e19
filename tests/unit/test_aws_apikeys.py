"""$connect's key check: an enabled key of the usage plan, answered from a short cache
so a reconnect storm does not hammer the API Gateway control plane."""

from __future__ import annotations

import pytest
from mdcrawl.adapters.aws.apikeys import ApiKeyChecker

from tests.support.aws import moto_clients


@pytest.fixture
def apigw():
    with moto_clients() as aws:
        client = aws.session.client("apigateway")
        plan = client.create_usage_plan(name="plan")["id"]
        key = client.create_api_key(name="k", enabled=True, value="secret-value-0123456789")
        client.create_usage_plan_key(usagePlanId=plan, keyId=key["id"], keyType="API_KEY")
        yield client, plan, key["id"]


class Counting:
    def __init__(self, client) -> None:
        self.client, self.calls = client, 0

    def __getattr__(self, name):
        self.calls += 1
        return getattr(self.client, name)


def test_keys_are_checked_then_cached_for_a_while(apigw) -> None:
    client, plan, key_id = apigw
    counting, clock = Counting(client), [0.0]
    checker = ApiKeyChecker(counting, plan, cache_s=60, now=lambda: clock[0])
    assert checker.owner_of("secret-value-0123456789") == key_id
    assert checker.owner_of("not-a-key") is None
    calls = counting.calls
    for _ in range(5):
        assert checker.owner_of("secret-value-0123456789") == key_id
        assert checker.owner_of("not-a-key") is None
    assert counting.calls == calls  # served from the cache

    client.update_api_key(apiKey=key_id, patchOperations=[
        {"op": "replace", "path": "/enabled", "value": "false"}])
    assert checker.owner_of("secret-value-0123456789") == key_id  # still cached
    clock[0] += 61
    assert checker.owner_of("secret-value-0123456789") is None  # disabled key refused
