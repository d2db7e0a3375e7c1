"""What each import costs (issue 16: import time): a fresh interpreter shows what one
statement pulled in.

``import sse_toolcalls`` loads no submodule and nothing of the standard library; the
framer needs neither the dataclasses (with ``inspect``, ``ast``, ``dis``) nor the calls;
the parser needs no request or result builder; the builders load their dialect on first
call. The figures are in ``docs/design.md`` ("Import cost"), measured by
``python -m benchmarks.imports``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Heavy for what they do here: inspect and its companions are what dataclasses pulls in.
_INSPECT = ("ast", "dataclasses", "dis", "inspect", "tokenize")

_NEVER_WITH_THE_CORE = (
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
    "sse_toolcalls.runtime",
    "sse_toolcalls.runtime.tools",
)


def _loaded_by(code: str, *, pure: bool = False) -> list[str]:
    """The modules ``code`` added to a fresh interpreter's ``sys.modules``."""
    probe = (
        "import sys\n_before = set(sys.modules)\n"
        f"{code}\n"
        "_added = sorted(set(sys.modules) - _before)\n"
        "import json\nprint(json.dumps(_added))"
    )
    env = {"PATH": "/usr/bin:/bin", "SSE_TOOLCALLS_PURE_PYTHON": "1" if pure else "0"}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    ).stdout
    loaded: list[str] = json.loads(out)
    return loaded


FACE = ["sse_toolcalls", "sse_toolcalls._faces", "sse_toolcalls._moved"]
"""The root and its two tables (the faces' names, the old paths'), which import only sys."""


def test_import_loads_the_root_alone() -> None:
    # No module of the library's jobs and nothing of the standard library: not typing,
    # not importlib.
    assert _loaded_by("import sse_toolcalls") == FACE


def test_dir_and_all_load_nothing() -> None:
    loaded = _loaded_by("import sse_toolcalls\ndir(sse_toolcalls)\nsse_toolcalls.__all__")
    assert loaded == FACE


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_the_framer_loads_its_errors_and_nothing_of_the_parser(pure: bool) -> None:
    loaded = _loaded_by("from sse_toolcalls import SSEFramer", pure=pure)
    # The compiled twin is loaded, when it was built, even where the pure one is chosen.
    ours = {name for name in loaded if name.startswith("sse_toolcalls")}
    # _checks: the one owner of a setting's number rule (max_event_bytes); it loads math.
    # _event: the event type, below both the errors that carry events and the framer.
    assert ours - {"sse_toolcalls._sse_c"} == {
        *FACE,
        "sse_toolcalls._checks",
        "sse_toolcalls.errors",
        "sse_toolcalls.framing",
        "sse_toolcalls._event",
        "sse_toolcalls.framing.sse",
    }
    assert [name for name in _INSPECT if name in loaded] == []


def test_the_parser_loads_no_builder_and_no_heavy_dependency() -> None:
    loaded = _loaded_by("from sse_toolcalls import StreamParser, ToolCallParser")
    assert [name for name in _NEVER_WITH_THE_CORE if name in loaded] == []
    # Loaded: this is the cost STYLE 2's frozen dataclasses carry (docs/design.md).
    assert "dataclasses" in loaded


def test_a_misspelt_name_is_an_attribute_error_with_a_hint() -> None:
    # The interpreter sets the error's name and obj; the traceback's suggestion comes from
    # the root's __dir__, which lists the names not loaded yet.
    code = (
        "import traceback, sse_toolcalls\n"
        "try:\n    sse_toolcalls.ToolRegistr\n"
        "except AttributeError as exc:\n"
        "    print(''.join(traceback.format_exception_only(exc)).strip())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == (
        "AttributeError: module 'sse_toolcalls' has no attribute 'ToolRegistr'. "
        "Did you mean: 'ToolRegistry'?"
    )


def test_a_submodule_asked_of_the_root_computes_no_hint() -> None:
    # "from sse_toolcalls import framing" asks the root's __getattr__ first: difflib, which
    # only the hint needs, stays out.
    loaded = _loaded_by("from sse_toolcalls import framing, _json")
    assert "difflib" not in loaded
    assert "sse_toolcalls.framing.sse" in loaded


def test_a_builder_loads_its_dialect_on_first_call() -> None:
    loaded = _loaded_by(
        "import sse_toolcalls\n"
        "sse_toolcalls.tool_declarations('gemini', [])\n"
        "from sse_toolcalls.dialects.naming import ToolNameMap\n"
        "ToolNameMap('openai_chat', ['a' * 300])"
    )
    assert "sse_toolcalls.dialects.gemini.messages" in loaded
    assert "sse_toolcalls.dialects.openai_chat.messages" not in loaded
    assert "hashlib" in loaded
