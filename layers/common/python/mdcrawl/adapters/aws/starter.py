"""StepFunctionsStarter: starts a job's state machine, named after the job so that a
retried POST cannot start a second crawl."""

from __future__ import annotations

import json
from typing import Any

from .calls import call_unless

ALREADY_EXISTS = "ExecutionAlreadyExists"


class StepFunctionsStarter:
    def __init__(self, client: Any, state_machine_arn: str) -> None:
        self._client = client
        self._arn = state_machine_arn

    def start(self, job_id: str, input: dict[str, Any]) -> bool:
        """True if an execution runs for the job now; False if one by that name exists.
        (Step Functions answers a repeat with the *same* input, while the first is still
        running, with success and the same execution: no second crawl either way.)"""
        started = call_unless(
            self._client.start_execution,
            (ALREADY_EXISTS,),
            stateMachineArn=self._arn,
            name=job_id,
            input=json.dumps(input),
        )
        return started is not None
