"""The IAM sufficiency checker (tests/support/iam.py) evaluates what IAM evaluates:
actions, resource wildcards, conditions whose key the request lacks, and S3's
404-needs-ListBucket rule."""

from __future__ import annotations

from typing import Any

from mdcrawl.names import Table

from tests.support.iam import BUCKET_ARN, Call, Names, check_calls, needs

ROLE = "PipelineCrawlerRole"
BODY = f"{BUCKET_ARN}/cache/bodies/abc"


def statement(action: str, resource: str, condition: dict[str, Any] | None = None) -> dict:
    return {"Effect": "Allow", "Action": [action], "Resource": [resource],
            "Condition": condition or {}}


def read(may_miss: bool = True) -> Call:
    return Call("crawler", "s3:GetObject", BODY, (), may_miss, "s3.HeadObject")


GET = statement("s3:GetObject", f"{BUCKET_ARN}/cache/bodies/*")


def test_a_read_that_may_miss_needs_list_on_the_bucket() -> None:
    assert check_calls({read()}, {ROLE: [GET, statement("s3:ListBucket", BUCKET_ARN)]}) == []
    (problem,) = check_calls({read()}, {ROLE: [GET]})
    assert "403, not 404" in problem
    assert check_calls({read(may_miss=False)}, {ROLE: [GET]}) == []


def test_a_prefix_condition_never_applies_to_an_object_read() -> None:
    conditioned = statement(
        "s3:ListBucket", BUCKET_ARN, {"StringLike": {"s3:prefix": ["cache/bodies/*"]}}
    )
    assert len(check_calls({read()}, {ROLE: [GET, conditioned]})) == 1
    listing = Call("crawler", "s3:ListBucket", BUCKET_ARN, (("s3:prefix", "cache/bodies/x"),))
    assert check_calls({listing}, {ROLE: [conditioned]}) == []
    other = Call("crawler", "s3:ListBucket", BUCKET_ARN, (("s3:prefix", "jobs/"),))
    assert len(check_calls({other}, {ROLE: [conditioned]})) == 1


def test_actions_and_resources_must_both_match() -> None:
    put = Call("crawler", "s3:PutObject", BODY)
    assert len(check_calls({put}, {ROLE: [GET]})) == 1
    outside = Call("crawler", "s3:GetObject", f"{BUCKET_ARN}/jobs/x/docs.md")
    assert len(check_calls({outside}, {ROLE: [GET, statement("s3:ListBucket", BUCKET_ARN)]})) == 1


def test_calls_map_to_iam_actions_and_labelled_arns() -> None:
    names = Names({"t-frontier": Table.FRONTIER}, "bkt")
    query = {"TableName": "t-frontier", "IndexName": "pending"}
    assert list(needs("dynamodb", "Query", query, names)) == [
        ("dynamodb:Query", "<StorageFrontier.Arn>/index/pending", (), False)
    ]
    upload = {"Bucket": "bkt", "Key": "jobs/1/docs.md", "UploadId": "u", "PartNumber": 1}
    assert list(needs("s3", "UploadPart", upload, names)) == [
        ("s3:PutObject", f"{BUCKET_ARN}/jobs/1/docs.md", (), False)
    ]
    head = {"Bucket": "bkt", "Key": "cache/bodies/x"}
    assert list(needs("s3", "HeadObject", head, names))[0][3] is True
    batch = {"TransactItems": [{"Put": {"TableName": "t-frontier"}},
                               {"ConditionCheck": {"TableName": "t-frontier"}}]}
    assert [n[0] for n in needs("dynamodb", "TransactWriteItems", batch, names)] == [
        "dynamodb:PutItem", "dynamodb:ConditionCheckItem"
    ]
