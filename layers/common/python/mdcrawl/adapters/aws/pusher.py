"""ApiGatewayPusher: one event to one WebSocket connection through the API Gateway
Management API (the client is built with the stage's https endpoint)."""

from __future__ import annotations

import json
from typing import Any

from .calls import call_unless

GONE = "GoneException"


class ApiGatewayPusher:
    def __init__(self, client: Any) -> None:
        self._client = client

    def push(self, connection_id: str, message: dict[str, Any]) -> bool:
        """False when the client went away (the caller then forgets the connection)."""
        data = json.dumps(message, separators=(",", ":")).encode()
        sent = call_unless(
            self._client.post_to_connection, (GONE,), ConnectionId=connection_id, Data=data
        )
        return sent is not None
