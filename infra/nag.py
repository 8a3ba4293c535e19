"""cdk-nag (v3) wiring: the AwsSolutions pack runs as a synth-time validation plugin, and
each acknowledgement sits next to the construct it is about, naming the exact finding id
(cdk-nag 3 matches ids exactly: ``AwsSolutions-IAM5[Resource::*]``, no wildcards)."""

from __future__ import annotations

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct

PACK = "AwsSolutions"
MIN_REASON = 40  # characters: a reason a reviewer can check, not "needed"


def acknowledge(scope: IConstruct, finding: str, reason: str) -> None:
    """Acknowledge ``finding`` (e.g. ``AwsSolutions-IAM5[Resource::*]``) on ``scope``."""
    if not finding.startswith(f"{PACK}-") or len(reason) < MIN_REASON:
        raise ValueError(f"acknowledgement {finding!r} needs an exact id and a real reason")
    cdk.Validations.of(scope).acknowledge(
        cdk.Acknowledgment(id=f"{PACK}::{finding}", reason=reason)
    )


def add_checks(app: cdk.App) -> None:
    """Run AwsSolutions at synth: any unacknowledged error finding fails synthesis."""
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
