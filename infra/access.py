"""Least-privilege grants written out: explicit actions on explicit ARNs.

CDK's ``grant_read_write`` & co. hand out ``dynamodb:*Item`` families, ``/index/*`` and
``s3:*Object*`` on the whole bucket; these helpers name each action and each index or
key prefix a function needs, and acknowledge the one wildcard that must remain (the key
suffix under a prefix) with its exact cdk-nag finding id.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as ddb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import IConstruct

from .nag import acknowledge

# Table actions, grouped by intent so the per-function lists read like the design.
READ = ("GetItem", "Query")
WRITE = ("PutItem", "UpdateItem")


def nag_token(scope: IConstruct, value: str) -> str:
    """A token rendered the way cdk-nag prints it in finding ids: ``<Logical.Arn>``."""
    return _render(cdk.Stack.of(scope).resolve(value))


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_render(v) for v in value)
    ((fn, arg),) = value.items()
    if fn == "Fn::GetAtt":
        return f"<{arg[0]}.{arg[1]}>"
    if fn == "Ref":
        return f"<{arg}>"
    if fn == "Fn::Join":
        return arg[0].join(_render(v) for v in arg[1])
    raise ValueError(f"cannot render {value!r} for a cdk-nag finding id")


def table_access(
    role: iam.IRole, table: ddb.ITableV2, actions: Iterable[str], *, indexes: Iterable[str] = ()
) -> None:
    """``actions`` on the table; ``Query`` on each named index (never ``/index/*``)."""
    policy = role.add_to_principal_policy
    policy(
        iam.PolicyStatement(
            actions=sorted(f"dynamodb:{a}" for a in set(actions)), resources=[table.table_arn]
        )
    )
    index_arns = [f"{table.table_arn}/index/{name}" for name in indexes]
    if index_arns:
        policy(iam.PolicyStatement(actions=["dynamodb:Query"], resources=index_arns))


def bucket_access(
    role: iam.IRole,
    bucket: s3.IBucket,
    *,
    read: Iterable[str] = (),
    write: Iterable[str] = (),
    why: str,
) -> None:
    """Get on ``read`` prefixes, Put (+ multipart abort) on ``write`` prefixes, and
    ``s3:ListBucket`` on the bucket for any role that reads.

    Why List, unconditioned: S3 answers a GetObject/HeadObject on a missing key with 404
    only when the caller may ``s3:ListBucket`` the bucket, 403 AccessDenied otherwise. A
    grant conditioned on ``s3:prefix`` does not count: that key exists only in a List
    request's context, never in a GetObject's. Every read here is an existence check
    (a cached body, a cached markdown, a job's pages.zip) that must tell "missing" from
    "forbidden"; treating AccessDenied as missing instead would turn a real permission
    error into silent re-fetching or empty outputs. Listing reveals key names only (job
    ids, content hashes) of this stack's private bucket; contents still need GetObject
    on the prefix (tests/e2e checks every recorded call against these roles)."""
    read, write = sorted(set(read)), sorted(set(write))
    objects = lambda prefixes: [bucket.arn_for_objects(f"{p}*") for p in prefixes]  # noqa: E731
    if read:
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=objects(read))
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["s3:ListBucket"], resources=[bucket.bucket_arn])
        )
    if write:
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:PutObject", "s3:AbortMultipartUpload"], resources=objects(write)
            )
        )
    for prefix in sorted({*read, *write}):
        resource = nag_token(role, bucket.arn_for_objects(f"{prefix}*"))
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::{resource}]",
            f"Objects under the {prefix} prefix only; the key suffix is a job id, "
            f"content hash or page name known at run time. {why}",
        )
