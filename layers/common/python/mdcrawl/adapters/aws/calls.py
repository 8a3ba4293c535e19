"""The one place where botocore errors become ``errors.StoreError``, for every AWS
adapter. An error code the caller expects (a failed condition, a missing key, a gone
connection) is an answer, not a failure: it comes back as None."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ...errors import StoreError

CONDITION_FAILED = "ConditionalCheckFailedException"


def error_code(err: ClientError) -> str:
    return str(err.response.get("Error", {}).get("Code", ""))


def call(operation: Callable[..., Any], **kwargs: Any) -> Any:
    """Run one client call; any botocore failure becomes StoreError."""
    return call_unless(operation, (), **kwargs)


def call_unless(operation: Callable[..., Any], expected: tuple[str, ...], **kwargs: Any) -> Any:
    """Run one client call; None if it failed with one of the ``expected`` codes."""
    name = getattr(operation, "__name__", "call")
    try:
        return operation(**kwargs)
    except ClientError as err:
        if error_code(err) in expected:
            return None
        raise StoreError(f"{name}: {error_code(err)}: {err}") from err
    except BotoCoreError as err:
        raise StoreError(f"{name}: {err}") from err


def call_if(operation: Callable[..., Any], **kwargs: Any) -> Any:
    """Run a conditional write; None when its condition failed."""
    return call_unless(operation, (CONDITION_FAILED,), **kwargs)
