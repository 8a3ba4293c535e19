"""`python app.py` synthesizes; cfn-lint passes; cdk-nag has nothing unacknowledged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import STACK, Synth

# cfn-lint rules ignored, each with its reason:
IGNORED_CFN_LINT = {
    # CDK writes DependsOn from each function (and the state machine) to its role next
    # to the GetAtt on that role: redundant, harmless, and not ours to remove.
    "W3005": "DependsOn already enforced by a GetAtt (CDK's own DependsOn on roles)",
}


def test_app_synthesizes_with_the_outputs_a_deployer_needs(synth: Synth) -> None:
    outputs = synth.template["Outputs"]
    for name in ("RestApiUrl", "WebSocketUrl", "BucketName", "ApiKeyId", "StateMachineArn"):
        assert name in outputs, name


def test_cfn_lint_passes(synth: Synth) -> None:
    template = synth.outdir / f"{STACK}.template.json"
    cfn_lint = Path(sys.executable).with_name("cfn-lint")
    done = subprocess.run(
        [str(cfn_lint), "--ignore-checks", *IGNORED_CFN_LINT, "--", str(template)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_cdk_nag_has_zero_unacknowledged_findings(synth: Synth) -> None:
    (report,) = synth.report["pluginReports"]
    assert report["pluginName"] == "AwsSolutions"
    assert report["conclusion"] == "success"
    # Warnings too (they would not fail synth): nothing may pass unexamined.
    assert report["violations"] == []


def test_every_acknowledgement_names_an_exact_finding_that_occurs(synth: Synth) -> None:
    (report,) = synth.report["pluginReports"]
    used = {(s["acknowledgedAt"], s["acknowledgedId"]) for s in report["suppressedViolations"]}
    declared = {
        (path.lstrip("/"), rule_id): reason
        for path, entries in synth.metadata.items()
        for entry in entries
        if entry["type"] == "aws:cdk:acknowledged-rules"
        for rule_id, reason in entry["data"].items()
    }
    assert declared, "no acknowledgements found in the metadata"
    stale = sorted(key for key in declared if key not in used)
    assert stale == [], f"acknowledgements that match no finding: {stale}"
    for (_, rule_id), reason in declared.items():
        assert rule_id.startswith("AwsSolutions::AwsSolutions-"), rule_id
        assert "*" not in rule_id.split("[")[0], rule_id
        assert len(reason) >= 40, (rule_id, reason)
