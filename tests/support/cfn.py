"""Reading a synthesized CloudFormation template: resources by their construct path
(the logical id without CDK's hash) and values with their tokens written out."""

from __future__ import annotations

import re
from typing import Any

_HASH = re.compile(r"[0-9A-F]{8}$")


def label(logical_id: str) -> str:
    """``StorageJobs4C7573CB`` -> ``StorageJobs``: the construct path without the hash."""
    return _HASH.sub("", logical_id)


def render(value: Any) -> str:
    """A CloudFormation value as text, tokens as ``<Label.Attr>`` / ``<Label>``."""
    if isinstance(value, str):
        return value
    ((fn, arg),) = value.items()
    if fn == "Fn::GetAtt":
        return f"<{label(arg[0])}.{arg[1]}>"
    if fn == "Ref":
        return f"<{label(arg)}>"
    if fn == "Fn::Join":
        return str(arg[0]).join(render(v) for v in arg[1])
    raise ValueError(value)
