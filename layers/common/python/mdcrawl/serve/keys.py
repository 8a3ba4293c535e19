"""Who is asking: the one API key of `mdcrawl serve`, compared in constant time.

Jobs made through `mdcrawl serve` belong to the owner "local" (docs/api.md); any other
key, or none, is the unauthenticated owner "" (the REST router answers 401).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

LOCAL_OWNER = "local"
API_KEY_HEADER = "x-api-key"


def owner_for(presented: str | None, api_key: str) -> str:
    """The local owner for the right key; "" for anything else."""
    if presented is not None and hmac.compare_digest(presented.encode(), api_key.encode()):
        return LOCAL_OWNER
    return ""


def presented_key(headers: Mapping[str, str], bearer: bool = False) -> str | None:
    """The key in ``x-api-key`` (case-insensitive mapping, e.g. Starlette's ``Headers``),
    or with ``bearer`` in ``Authorization: Bearer <key>`` as MCP clients send it."""
    if API_KEY_HEADER in headers:
        return headers[API_KEY_HEADER]
    if not bearer:
        return None
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None
