"""The stack only composes the capabilities and publishes the outputs."""

from __future__ import annotations

import aws_cdk as cdk
from constructs import Construct

from .api import RestApi
from .config import Settings
from .observability import Observability
from .pipeline import Pipeline
from .storage import Storage
from .webhook import Webhooks
from .websocket import WebSocketApi


class MdcrawlStack(cdk.Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        settings = Settings.from_context(self.node)  # fails synth on a bad value
        storage = Storage(self, "Storage", settings=settings)
        pipeline = Pipeline(self, "Pipeline", settings=settings, storage=storage)
        fns = pipeline.functions
        rest = RestApi(self, "Rest", settings=settings, handler=fns["api"])
        hooks = Webhooks(self, "Webhooks", orchestrator=fns["orchestrator"], api=fns["api"])
        ws = WebSocketApi(
            self,
            "WebSocket",
            settings=settings,
            handler=fns["websocket"],
            usage_plan=rest.usage_plan,
            # Live events reach subscribers only through the fan-out function (the
            # events table's stream); the functions that append events do not push.
            pushers=[fns["fanout"]],
        )
        # Execution logging on the WebSocket stage needs the account's CloudWatch role too.
        account = rest.api.node.try_find_child("Account")
        if account is not None:
            ws.stage.node.add_dependency(account)
        obs = Observability(
            self,
            "Observability",
            settings=settings,
            functions=fns,
            dlq=pipeline.dlq,
            state_machine=pipeline.state_machine,
            rest_api=rest.api,
        )
        cdk.CfnOutput(self, "RestApiUrl", value=rest.api.url, description="POST {url}jobs")
        cdk.CfnOutput(
            self, "WebSocketUrl", value=ws.url, description="wss URL; connect with ?api_key=<key>"
        )
        cdk.CfnOutput(self, "BucketName", value=storage.bucket.bucket_name)
        cdk.CfnOutput(
            self,
            "WebhookSecretArn",
            value=hooks.secret.secret_arn,
            description="The key that signs webhooks: aws secretsmanager get-secret-value",
        )
        cdk.CfnOutput(
            self,
            "ApiKeyId",
            value=rest.api_key.key_id,
            description="aws apigateway get-api-key --include-value --api-key <id>",
        )
        cdk.CfnOutput(self, "StateMachineArn", value=pipeline.state_machine.state_machine_arn)
        cdk.CfnOutput(self, "AlarmTopicArn", value=obs.topic.topic_arn)
