"""Bedrock request bodies held to botocore's own service model (bedrock-runtime).

The outside check of the two Bedrock dialects' message builders: a Converse body must be
a valid ``ConverseStream`` input once its blobs are bytes, as boto3 would send it, and
every string must keep the limits the model states (botocore's ``ParamValidator`` checks
types, required members, unions and minimums; the maximums, patterns and enums are
checked here from the same model).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import orjson
from botocore.session import get_session  # type: ignore[import-untyped]
from botocore.validate import ParamValidator  # type: ignore[import-untyped]

from sse_toolcalls._jsonsafe import dumps_safe

_MODEL = get_session().get_service_model("bedrock-runtime")
CONVERSE_INPUT = _MODEL.operation_model("ConverseStream").input_shape


def shape(name: str) -> Any:
    """A shape of the bedrock-runtime model by name."""
    return _MODEL.shape_for(name)


def wire(body: dict[str, Any]) -> Any:
    """The body as the HTTP request carries it (our encoder, then parsed back)."""
    return orjson.loads(dumps_safe(body))


def _to_boto(value: Any, node: Any, path: str, problems: list[str]) -> Any:
    """``value`` (wire JSON) as boto3 takes it: blobs as bytes. Checks on the way what
    ``ParamValidator`` leaves out: string maximums, patterns and enums, blob minimums."""
    kind = node.type_name
    if kind == "structure" and not getattr(node, "is_document_type", False):
        if not isinstance(value, dict):
            return value
        return {
            key: _to_boto(item, node.members[key], f"{path}.{key}", problems)
            if key in node.members
            else item
            for key, item in value.items()
        }
    if kind == "list" and isinstance(value, list):
        return [
            _to_boto(item, node.member, f"{path}[{i}]", problems) for i, item in enumerate(value)
        ]
    if kind == "blob" and isinstance(value, str):
        try:
            data = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            problems.append(f"{path}: not base64: {value[:40]!r}")
            return value
        if len(data) < node.metadata.get("min", 0):
            problems.append(f"{path}: blob shorter than {node.metadata['min']}")
        return data
    if kind == "string" and isinstance(value, str):
        meta = node.metadata
        if "max" in meta and len(value) > meta["max"]:
            problems.append(f"{path}: longer than {meta['max']}: {value[:40]!r}")
        if "pattern" in meta and re.fullmatch(meta["pattern"], value) is None:
            problems.append(f"{path}: {value[:40]!r} breaks {meta['pattern']}")
        if node.enum and value not in node.enum:
            problems.append(f"{path}: {value!r} not in {node.enum}")
    return value


def converse_problems(body: dict[str, Any]) -> list[str]:
    """Everything botocore's model says is wrong with a Converse body (``[]`` when it is
    a valid ``ConverseStream`` input)."""
    problems: list[str] = []
    params = _to_boto(wire(body), CONVERSE_INPUT, "body", problems)
    params["modelId"] = "anthropic.claude-sonnet-4-20250514-v1:0"
    report = ParamValidator().validate(params, CONVERSE_INPUT)
    if report.has_errors():
        problems.append(report.generate_report())
    return problems
