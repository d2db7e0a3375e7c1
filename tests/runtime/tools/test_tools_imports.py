"""Decision 8: the core, and the tools package itself, leave jsonschema unimported until a
registry compiles a schema."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def imported_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    return set(out.stdout.split())


@pytest.mark.parametrize(
    "statement",
    [
        "import sse_toolcalls",
        "import sse_toolcalls.calls, sse_toolcalls.errors",
        "import sse_toolcalls.framing.sse, sse_toolcalls.parser",
        "import sse_toolcalls.runtime.tools",
        "from sse_toolcalls.runtime.tools import ToolRegistry; ToolRegistry()",
    ],
)
def test_jsonschema_stays_out_of_sys_modules(statement: str) -> None:
    modules = imported_after(statement)
    assert "jsonschema" not in modules
    assert "pydantic" not in modules


def test_first_tool_added_brings_jsonschema_in() -> None:
    # The counterpart, so the test above cannot pass by never seeing any import at all.
    modules = imported_after(
        "from sse_toolcalls.runtime.tools import ToolRegistry\n"
        "ToolRegistry().add_schema_tool('t', {'type': 'object'}, print)"
    )
    assert "jsonschema" in modules
