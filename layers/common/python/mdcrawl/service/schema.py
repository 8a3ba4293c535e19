"""The JSON schema (OpenAPI 3.0 / JSON Schema draft 4) of ``POST /jobs`` and of a job's
options, derived from the models: docs/openapi.yaml holds what ``openapi_block`` prints
(``make openapi`` writes it, a test compares), and the AWS stack's API Gateway validates
bodies with ``request_schema`` under its own caps.

    python -m mdcrawl.service.schema     the JobRequest and Options schemas, as YAML
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ..options import OptionLimits, Profile, bounds, knob, option_fields
from .models import JobRequest

_TYPES = {int: "integer", float: "number", bool: "boolean", str: "string"}
_LENGTHS = {"MinLen": "minLength", "MaxLen": "maxLength"}


def request_schema(
    limits: OptionLimits | None = None, model: type[BaseModel] = JobRequest
) -> dict[str, Any]:
    """``POST /jobs``'s body under ``limits`` (default: the hosted profile)."""
    limits = limits or OptionLimits.of(Profile.HOSTED)
    options = dict(option_fields(model))
    properties = {n: field_schema(i) for n, i in model.model_fields.items() if n not in options}
    for name, info in options.items():
        properties[name] = _option_schema(name, info, limits, model)
    required = [n for n, i in model.model_fields.items() if i.is_required()]
    return {
        "type": "object",
        "additionalProperties": False,
        "required": required,
        "properties": properties,
    }


def options_schema(model: type[BaseModel] = JobRequest) -> dict[str, Any]:
    """A job's ``options`` as answered: every option, each of its type."""
    properties = {}
    for name, info in option_fields(model):
        schema = {k: v for k, v in field_schema(info).items() if k in ("type", "items")}
        if "items" in schema:
            schema["items"] = {"type": schema["items"]["type"]}
        if info.default is None:
            schema["nullable"] = True
        properties[name] = schema
    return {"type": "object", "required": list(properties), "properties": properties}


def field_schema(info: FieldInfo) -> dict[str, Any]:
    """Type and constraints of one field (str, int, float, bool, a tuple of those)."""
    annotation = info.annotation
    args = [a for a in getattr(annotation, "__args__", ()) if a is not type(None)]
    if getattr(annotation, "__origin__", None) is tuple:
        item = FieldInfo.from_annotation(args[0])
        schema: dict[str, Any] = {"type": "array", "items": field_schema(item)}
    else:
        base = annotation if annotation in _TYPES else args[0]
        schema = {"type": _TYPES[base]}
    for meta in info.metadata:
        name = type(meta).__name__
        if name in _LENGTHS:
            key = _LENGTHS[name]
            if schema["type"] == "array":
                key = key.replace("Length", "Items")
            schema[key] = getattr(meta, name.lower().replace("len", "_length"))
        pattern = getattr(meta, "pattern", None)
        if pattern is not None:
            schema["pattern"] = pattern
    found = bounds(info)
    if "ge" in found:
        schema["minimum"] = found["ge"]
    if "gt" in found:
        schema["minimum"], schema["exclusiveMinimum"] = found["gt"], True
    if "le" in found:
        schema["maximum"] = found["le"]
    if info.description:
        schema["description"] = info.description
    return schema


def _option_schema(
    name: str, info: FieldInfo, limits: OptionLimits, model: type[BaseModel]
) -> dict[str, Any]:
    schema = field_schema(info)
    cap = limits.caps.get(name)
    if cap is not None:
        schema["maximum"] = min(schema.get("maximum", cap), cap)
    default = limits.default(name, model)
    if default is not None:
        schema["default"] = list(default) if isinstance(default, tuple) else default
    refused = sorted(knob(info).refused_by)
    if refused:
        schema["description"] += f" (refused by: {', '.join(refused)})"
    return schema


def openapi_block() -> str:
    """The JobRequest and Options entries of docs/openapi.yaml's components.schemas."""
    lines = []
    for title, schema in (("JobRequest", request_schema()), ("Options", options_schema())):
        lines.append(f"    {title}:")
        for key, value in schema.items():
            if key != "properties":
                lines.append(f"      {key}: {_flow(value)}")
        lines.append("      properties:")
        for name, prop in schema["properties"].items():
            lines.append(f"        {name}: {_flow(prop)}")
    return "\n".join(lines) + "\n"


def _flow(value: Any) -> str:
    """YAML flow style; JSON is YAML, and keys need no quotes."""
    text = json.dumps(value, ensure_ascii=False)
    return re.sub(r'"([A-Za-z_]+)":', r"\1:", text)


BLOCK_START = "    JobRequest:\n"
BLOCK_END = "    Counters:\n"


def rewrite_openapi(path: Path) -> bool:
    """Put the derived block into the file; True when it changed."""
    text = path.read_text()
    start, end = text.index(BLOCK_START), text.index(BLOCK_END)
    updated = text[:start] + openapi_block() + text[end:]
    path.write_text(updated)
    return updated != text


if __name__ == "__main__":
    if len(sys.argv) > 1:
        changed = rewrite_openapi(Path(sys.argv[1]))
        print(f"{sys.argv[1]}: {'updated' if changed else 'unchanged'}")
    else:
        sys.stdout.write(openapi_block())
