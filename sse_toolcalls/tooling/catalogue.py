"""``sse-toolcalls catalogue TARGET``: a tool catalogue as Markdown, its declarations, its lint.

``TARGET`` is a registry, ``module:attribute`` (a :class:`~sse_toolcalls.runtime.tools.ToolRegistry`,
or a function of no arguments returning one), or a JSON file of tool definitions: a list,
or an object with a ``tools`` list (a request body), of declarations in any dialect's shape
or the neutral one:

| Shape | An item |
|---|---|
| neutral (:class:`~sse_toolcalls.calls.ToolSpec`) | ``{"name", "description", "parameters"}`` |
| OpenAI Chat Completions | ``{"type": "function", "function": {"name", "description", "parameters"}}`` |
| OpenAI Responses | ``{"type": "function", "name", "description", "parameters"}`` |
| Anthropic Messages | ``{"name", "description", "input_schema"}`` |
| Gemini | ``{"functionDeclarations": [{"name", "description", "parameters" or "parametersJsonSchema"}]}`` |
| Amazon Bedrock Converse | ``{"toolSpec": {"name", "description", "inputSchema": {"json"}}}`` (a request body: ``{"toolConfig": {"tools": [...]}}``) |

Gemini's ``parameters`` are its OpenAPI subset (``"type": "STRING"``, ``"nullable": true``);
they are read back as JSON Schema (``"type": ["string", "null"]``). A JSON file says nothing
about effects or sandboxes, so its tools show them as not declared.

The command prints the catalogue (each tool, what it does, its effect, where it runs, its
parameters), then the findings of :func:`~sse_toolcalls.runtime.tools.lint.lint_tools`; with
``--declarations DIR`` it writes ``DIR/<dialect>.json``, the ``tools`` field of a request in
each dialect. Exit status: 0; 1 with ``--strict`` when there are findings, or when a
dialect cannot declare the tools; 2 when the target cannot be read.
"""  # noqa: E501

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..calls import DIALECTS, ToolSpec
from ..errors import SSEToolCallsError, UsageError

if TYPE_CHECKING:
    from ..runtime.tools.lint import Finding
    from ..runtime.tools.registry import Tool

__all__ = ["CatalogueEntry", "load_catalogue", "render_markdown", "run_catalogue"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogueEntry:
    """One tool of a catalogue: what the model sees, and the registry's tool if any."""

    spec: ToolSpec
    """The tool as the model sees it."""

    tool: Tool | None = None
    """The registry's tool (its effect, sandbox...), or ``None`` for a JSON definition."""


# --------------------------------------------------------------------------------------
# Reading a target


def load_catalogue(target: str) -> list[CatalogueEntry]:
    """Read ``target``: a JSON file of tool definitions, or a registry ``module:attribute``.

    Raises:
        UsageError: the file cannot be read or holds no tool definitions in a known
            shape, or the attribute cannot be imported or is not a registry.
    """
    path = Path(target)
    if path.suffix == ".json" or path.is_file():
        return _from_file(path)
    return _from_registry(target)


def _from_registry(target: str) -> list[CatalogueEntry]:
    module, _, attribute = target.partition(":")
    if not module or not attribute:
        raise UsageError(f"{target!r} is neither a JSON file nor a module:attribute")
    try:
        value: Any = importlib.import_module(module)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"cannot load {target!r}: {exc}") from exc
    from ..runtime.tools.registry import ToolRegistry

    if not isinstance(value, ToolRegistry) and callable(value):
        # A factory (the demo's registries take their language, defaulting to English).
        value = value()
    if not isinstance(value, ToolRegistry):
        raise UsageError(f"{target!r} is not a ToolRegistry (nor a function returning one)")
    return [CatalogueEntry(spec=tool.spec, tool=tool) for tool in value]


def _from_file(path: Path) -> list[CatalogueEntry]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    elif isinstance(data, dict) and isinstance(data.get("toolConfig"), dict):
        # A Converse request body keeps its tools in toolConfig.
        data = data["toolConfig"].get("tools")
    if not isinstance(data, list):
        raise UsageError(f"{path}: expected a list of tool definitions, or {{'tools': [...]}}")
    specs: list[ToolSpec] = []
    for n, item in enumerate(data):
        specs.extend(_specs_of(item, f"{path}[{n}]"))
    return [CatalogueEntry(spec=spec) for spec in specs]


def _specs_of(item: Any, where: str) -> list[ToolSpec]:
    """The neutral specs of one declaration, whatever its dialect's shape."""
    if not isinstance(item, dict):
        raise UsageError(f"{where}: a tool definition must be an object")
    if isinstance(item.get("functionDeclarations"), list):
        out = []
        for n, declaration in enumerate(item["functionDeclarations"]):
            if not isinstance(declaration, dict):
                raise UsageError(f"{where}.functionDeclarations[{n}]: must be an object")
            schema = declaration.get("parametersJsonSchema")
            if schema is None:
                schema = _from_gemini(declaration.get("parameters", {"type": "object"}))
            out.append(_spec(declaration, schema, f"{where}.functionDeclarations[{n}]"))
        return out
    if isinstance(item.get("toolSpec"), dict):
        spec = item["toolSpec"]
        schema = spec.get("inputSchema")
        if not isinstance(schema, dict) or "json" not in schema:
            raise UsageError(f"{where}.toolSpec: inputSchema must be {{'json': <schema>}}")
        return [_spec(spec, schema["json"], f"{where}.toolSpec")]
    if item.get("type") == "function" and isinstance(item.get("function"), dict):
        function = item["function"]
        return [_spec(function, function.get("parameters"), where)]
    if "input_schema" in item:
        return [_spec(item, item["input_schema"], where)]
    if "name" in item:
        return [_spec(item, item.get("parameters"), where)]
    raise UsageError(f"{where}: not a tool definition of a known shape (see --help)")


def _spec(item: dict[str, Any], schema: Any, where: str) -> ToolSpec:
    name, description = item.get("name"), item.get("description", "")
    if not isinstance(name, str) or not name:
        raise UsageError(f"{where}: a tool needs a non-empty string name")
    if not isinstance(description, str):
        raise UsageError(f"{where}: the description of {name!r} must be a string")
    if schema is None:
        schema = {"type": "object", "properties": {}}
    if not isinstance(schema, dict):
        raise UsageError(f"{where}: the parameters of {name!r} must be an object schema")
    return ToolSpec(name=name, description=description, parameters=schema)


def _from_gemini(node: Any) -> Any:
    """Gemini's OpenAPI-subset schema read back as JSON Schema (types lower-cased,
    ``nullable`` as a ``null`` type)."""
    if isinstance(node, list):
        return [_from_gemini(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _from_gemini(v) for k, v in node.items() if k not in ("nullable", "propertyOrdering")}
    if isinstance(node.get("type"), str):
        out["type"] = node["type"].lower()
        if node.get("nullable") is True:
            out["type"] = [out["type"], "null"]
    return out


# --------------------------------------------------------------------------------------
# Markdown


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _type_text(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "const" in schema:
        return f"exactly `{json.dumps(schema['const'])}`"
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " or ".join(_type_text(member) for member in schema[key])
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    declared = schema.get("type")
    text = " or ".join(declared) if isinstance(declared, list) else str(declared or "any")
    if declared == "array" and isinstance(schema.get("items"), dict):
        text = f"array of {_type_text(schema['items'])}"
    if "format" in schema:
        text += f" ({schema['format']})"
    return text


def _where_it_runs(tool: Tool | None) -> str:
    if tool is None:
        return "not declared"
    box = tool.sandbox
    if box is None:
        timeout = "no timeout" if tool.timeout is None else f"timeout {tool.timeout:g} s"
        return f"in this process ({timeout})"
    reads = ", ".join(f"`{p}`" for p in box.read) or "nothing"
    writes = ", ".join(f"`{p}`" for p in box.write) or "nothing"
    network = "network allowed" if box.network else "no network"
    return (
        f"in a sandbox: reads {reads}; writes {writes}; {network}; timeout {box.timeout:g} s, "
        f"memory {box.memory_bytes // (1 << 20)} MiB, {box.processes} processes"
    )


def _effect_text(tool: Tool | None) -> str:
    if tool is None:
        return "not declared"
    if tool.effect == "write":
        return "write (changes something: never run twice for one call)"
    return "read (no side effect: may be retried)"


def render_markdown(entries: Sequence[CatalogueEntry], findings: Sequence[Finding]) -> str:
    """The catalogue as Markdown: each tool, then the findings."""
    from ..runtime.tools.results import count

    lines = ["# Tool catalogue", "", f"{count(len(entries), 'tool')}.", ""]
    for entry in entries:
        spec, tool = entry.spec, entry.tool
        lines += [f"## `{spec.name}`", "", spec.description.strip() or "*(no description)*", ""]
        lines.append(f"- **Effect:** {_effect_text(tool)}")
        lines.append(f"- **Runs:** {_where_it_runs(tool)}")
        if tool is not None:
            lines.append(f"- **Beside other calls:** {'yes' if tool.parallel_safe else 'no'}")
            if tool.needs_approval:
                lines.append("- **Approval:** a person approves each call")
        lines.append("")
        properties = spec.parameters.get("properties")
        required = set(spec.parameters.get("required", ()))
        if isinstance(properties, dict) and properties:
            lines += ["| Parameter | Type | Required | Description |", "|---|---|---|---|"]
            for name, sub in properties.items():
                sub_schema = sub if isinstance(sub, dict) else {}
                about = str(sub_schema.get("description", ""))
                if "default" in sub_schema:
                    about = f"{about} (default `{json.dumps(sub_schema['default'])}`)".strip()
                lines.append(
                    f"| `{name}` | {_cell(_type_text(sub))} | "
                    f"{'yes' if name in required else 'no'} | {_cell(about)} |"
                )
        else:
            lines.append("No parameters.")
        lines.append("")
    lines += ["## Findings", ""]
    if not findings:
        lines.append("No findings.")
    for finding in findings:
        where = f"`{finding.tool}`" + (f" · `{finding.parameter}`" if finding.parameter else "")
        lines.append(f"- **{finding.code}** {where}: {finding.message}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# The command


def run_catalogue(
    target: str,
    *,
    declarations: str | None = None,
    strict: bool = False,
    out: TextIO,
    err: TextIO,
) -> int:
    """Run ``sse-toolcalls catalogue``; return the exit status (see the module docstring)."""
    from ..messages import tool_declarations
    from ..runtime.tools.lint import lint_tools

    try:
        entries = load_catalogue(target)
    except UsageError as exc:
        err.write(f"{exc}\n")
        return 2
    findings = lint_tools(entry.spec for entry in entries)
    out.write(render_markdown(entries, findings))
    status = 1 if strict and findings else 0
    if declarations is not None:
        folder = Path(declarations)
        folder.mkdir(parents=True, exist_ok=True)
        specs = [entry.spec for entry in entries]
        for dialect in DIALECTS:
            try:
                body = tool_declarations(dialect, specs)
            except SSEToolCallsError as exc:
                err.write(f"{dialect}: cannot declare these tools: {exc}\n")
                status = 1
                continue
            text = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
            (folder / f"{dialect}.json").write_text(text, encoding="utf-8")
    if findings:
        from ..runtime.tools.results import count

        err.write(f"{count(len(findings), 'finding')}\n")
    return status
