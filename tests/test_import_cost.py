"""``import sse_toolcalls`` loads the streaming core only (issue 16: import time).

The request and result builders of each dialect, and hashlib behind the tool-name map,
load on first use; a fresh interpreter shows what one import pulled in.
"""

from __future__ import annotations

import json
import subprocess
import sys

_DEFERRED = (
    "anyio",
    "hashlib",
    "httpx",
    "jsonschema",
    "sse_toolcalls.conversation",
    "sse_toolcalls.dialects.anthropic.messages",
    "sse_toolcalls.dialects.gemini.messages",
    "sse_toolcalls.dialects.gemini.schema",
    "sse_toolcalls.dialects.openai_chat.messages",
    "sse_toolcalls.dialects.openai_responses.messages",
    "sse_toolcalls._jsonsafe",
)


def _loaded_after(code: str) -> list[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    loaded: list[str] = json.loads(out)
    return loaded


def test_import_loads_no_builder_and_no_heavy_dependency() -> None:
    loaded = _loaded_after("import sse_toolcalls")
    assert [name for name in _DEFERRED if name in loaded] == []


def test_a_builder_loads_its_dialect_on_first_call() -> None:
    loaded = _loaded_after(
        "import sse_toolcalls\n"
        "sse_toolcalls.tool_declarations('gemini', [])\n"
        "from sse_toolcalls.naming import ToolNameMap\n"
        "ToolNameMap('openai_chat', ['a' * 300])"
    )
    assert "sse_toolcalls.dialects.gemini.messages" in loaded
    assert "sse_toolcalls.dialects.openai_chat.messages" not in loaded
    assert "hashlib" in loaded
