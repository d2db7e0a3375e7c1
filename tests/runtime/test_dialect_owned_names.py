"""Each dialect's usage field names and telemetry name are its folder's (``DialectSpec``,
issue 30, item 5): the runtime's usage reader and tracing read them from the spec and
name no dialect themselves."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from sse_toolcalls.dialects import SPECS, spec_for
from sse_toolcalls.runtime.tracing import _provider
from sse_toolcalls.runtime.usage import Usage, usage_of

PACKAGE = Path(__file__).resolve().parents[2] / "sse_toolcalls"


def test_no_module_outside_the_dialects_holds_usage_or_telemetry_names() -> None:
    # Each dialect's usage field names and telemetry name are its folder's (DialectSpec):
    # the runtime's readers name no dialect.
    for relative in ("runtime/usage.py", "runtime/tracing.py"):
        tree = ast.parse((PACKAGE / relative).read_text())
        literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
        assert not literals & set(SPECS), relative
        assert not literals & {"prompt_tokens", "promptTokenCount", "gcp.gemini"}, relative


def test_a_new_dialects_usage_and_telemetry_come_from_its_spec(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = dataclasses.replace(
        spec_for("openai_chat"),
        usage={"input_tokens": (("in",), ("in_cached",)), "output_tokens": (("out", "n"),)},
        telemetry_name="example.llm",
    )
    monkeypatch.setitem(SPECS, "openai_chat", spec)
    raw = json.loads('{"in": 3, "in_cached": 4, "out": {"n": 5}, "prompt_tokens": 99}')
    assert usage_of("openai_chat", raw) == Usage(input_tokens=7, output_tokens=5, turns=1)
    attributes: dict[str, object] = {}
    _provider(attributes, "openai_chat")
    assert attributes["gen_ai.provider.name"] == "example.llm"


def test_every_usage_table_names_counts_of_usage() -> None:
    counts = {f.name for f in dataclasses.fields(Usage)} - {"turns"}
    for spec in SPECS.values():
        assert set(spec.usage) <= counts, spec.name
        assert all(paths and all(paths) for paths in spec.usage.values()), spec.name
        assert spec.telemetry_name
