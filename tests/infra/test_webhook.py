"""Webhooks in the template: the signing secret, who may read it, and the rule that
hands each job's end to the orchestrator's notify step."""

from __future__ import annotations

from mdcrawl.names import EnvVar

from tests.support.cfn import label, render
from tests.support.iam import allowed, role_statements

from .conftest import Synth


def test_job_ends_reach_the_notify_step(synth: Synth) -> None:
    (rule,) = [r["Properties"] for k, r in synth.of_type("AWS::Events::Rule").items()
               if label(k).startswith("WebhooksJobsEnded")]
    assert rule["EventPattern"] == {"source": ["mdcrawl"],
                                    "detail-type": ["Job Completed", "Job Failed"]}
    (target,) = rule["Targets"]
    assert render(target["Arn"]) == "<PipelineOrchestrator.Arn>"
    assert '"step":"notify"' in target["InputTransformer"]["InputTemplate"]
    assert target["InputTransformer"]["InputPathsMap"] == {
        "detail-job_id": "$.detail.job_id", "detail": "$.detail"}


def test_only_the_orchestrator_reads_the_signing_secret(synth: Synth) -> None:
    (secret,) = [label(k) for k in synth.of_type("AWS::SecretsManager::Secret")]
    roles = role_statements(synth.template)
    readers = [r for r, sts in roles.items()
               if allowed(sts, "secretsmanager:GetSecretValue", f"<{secret}>", {})]
    assert readers == ["PipelineOrchestratorRole"]
    functions = {label(k): v["Properties"]["Environment"]["Variables"]
                 for k, v in synth.of_type("AWS::Lambda::Function").items()
                 if "Environment" in v["Properties"]}
    told = sorted(k for k, env in functions.items() if EnvVar.WEBHOOK_SECRET.value in env)
    assert told == ["PipelineApi", "PipelineOrchestrator"]
    assert "WebhookSecretArn" in synth.template["Outputs"]
