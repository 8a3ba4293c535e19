"""The synthesized state machine definition, for tests that execute it (moto's Step
Functions interpreter). Pure JSON work, no CDK import: read the template, resolve the
``Fn::Join`` CDK wrote around the ASL, and put real function ARNs in.

    template = load_template()                      # cdk.out/Mdcrawl.template.json
    asl = definition_json(template, {"orchestrator": fn_arn}, wait_seconds=0,
                          retry_interval_seconds=1)
    sfn.create_state_machine(name="jobs", definition=asl, roleArn=role)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FUNCTION_TAG = "mdcrawl:function"  # every Lambda function carries its name in this tag
STACK_NAME = "Mdcrawl"
_PSEUDO = {
    "AWS::Partition": "aws",
    "AWS::Region": "us-east-1",
    "AWS::AccountId": "123456789012",
    "AWS::URLSuffix": "amazonaws.com",
}


def load_template(path: str | Path | None = None) -> dict[str, Any]:
    """The template ``python app.py`` wrote (default ``cdk.out/Mdcrawl.template.json``)."""
    path = Path(
        path or Path(__file__).resolve().parent.parent / "cdk.out" / f"{STACK_NAME}.template.json"
    )
    return json.loads(Path(path).read_text())


def function_names(template: Mapping[str, Any]) -> dict[str, str]:
    """Logical id -> function name (api, websocket, orchestrator, crawler, processor)."""
    names = {}
    for logical_id, res in template["Resources"].items():
        if res["Type"] == "AWS::Lambda::Function":
            tags = {t["Key"]: t["Value"] for t in res["Properties"].get("Tags", [])}
            if FUNCTION_TAG in tags:
                names[logical_id] = tags[FUNCTION_TAG]
    return names


def state_machine_definition(
    template: Mapping[str, Any], function_arns: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The ASL as a dict. A function's ARN is ``function_arns[name]`` when given, else the
    placeholder ``${function:<name>}``."""
    (machine,) = [
        r for r in template["Resources"].values() if r["Type"] == "AWS::StepFunctions::StateMachine"
    ]
    names = function_names(template)
    arns = dict(function_arns or {})

    def resolve(value: Any) -> str:
        if isinstance(value, str):
            return value
        ((fn, arg),) = value.items()
        if fn == "Fn::Join":
            return arg[0].join(resolve(v) for v in arg[1])
        if fn == "Fn::GetAtt" and arg[0] in names and arg[1] == "Arn":
            return arns.get(names[arg[0]], f"${{function:{names[arg[0]]}}}")
        if fn == "Ref" and arg in _PSEUDO:
            return _PSEUDO[arg]
        raise ValueError(f"unexpected token in the state machine definition: {value!r}")

    return json.loads(resolve(machine["Properties"]["DefinitionString"]))


def definition_json(
    template: Mapping[str, Any],
    function_arns: Mapping[str, str],
    *,
    wait_seconds: int | None = None,
    retry_interval_seconds: int | None = None,
) -> str:
    """The ASL with real ARNs; optionally with shorter Wait states and retry intervals
    (moto's interpreter sleeps for real; retries only happen on Lambda service errors,
    so a run without them never waits on a retry interval)."""
    if retry_interval_seconds is not None and retry_interval_seconds < 1:
        raise ValueError("ASL retry intervals are whole seconds, at least 1")
    asl = state_machine_definition(template, function_arns)
    for state in asl["States"].values():
        if wait_seconds is not None and state["Type"] == "Wait":
            state["Seconds"] = wait_seconds
        if retry_interval_seconds is not None:
            for retry in state.get("Retry", []):
                retry["IntervalSeconds"] = retry_interval_seconds
    return json.dumps(asl)
