"""W3's costs stay linear in the size of one call's arguments: counted, never timed.

Each test pins one cost that W3 (one call's arguments from 10 KB to 10 MB) found out of
line, by what it allocates, how many times it reads, or which readers it calls, so a
loaded machine cannot make it flaky (benchmarks/RESULTS.md, "h35").
"""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import pytest

from sse_toolcalls.dialects import _common


def _args_text(repeats: int) -> str:
    # Code with newlines, quotes, backslashes and a non-Latin-1 character (UCS-2 text),
    # and brackets inside strings that must not count.
    code = 'def f(x):\n    return "a\\\\b" + x  # €\n'
    return json.dumps({"code": code * repeats, "k": [[{"a": "]]]{{"}]]}, ensure_ascii=False)


def _peak(function: Any, *args: Any) -> int:
    tracemalloc.start()
    try:
        function(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("wrapped", [False, True], ids=["arguments", "event"])
def test_json_depth_holds_a_few_bytes_per_character(wrapped: bool) -> None:
    # The regex it replaced kept 47 to 120 bytes of matcher state per character of a
    # string; an event whose arguments are one escaped string is all string.
    text = _args_text(2000)
    if wrapped:
        text = json.dumps({"choices": [{"delta": {"arguments": text}}]}, ensure_ascii=False)
    assert _common.json_depth(text) == 4  # the brackets in strings do not count
    assert _peak(_common.json_depth, text) <= 8 * len(text)


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        (r'["\\", [1]]', 2),
        (r'["\\\"[", [1]]', 2),
        (r'{"a\\\\": "\\\\\"]]]"}', 1),
        (r'"\"[[["', 0),
        ('[[[""]], "[", {}]', 3),
    ],
)
def test_json_depth_reads_escapes_as_json_does(text: str, depth: int) -> None:
    json.loads(text)  # each is valid JSON
    assert _common.json_depth(text) == depth


def test_a_call_without_repeated_keys_is_read_once_even_with_colons_in_strings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Colons inside strings (URLs, times, code) used to send every such call's arguments
    # to a second, exact reading by the stdlib's parser with a Python hook per object.
    reads: list[str] = []
    real = json.loads

    def counting(text: str, **kwargs: Any) -> Any:
        reads.append(text)
        return real(text, **kwargs)

    monkeypatch.setattr(json, "loads", counting)
    text = json.dumps({"url": "https://x.test:8080/a", "at": "12:30", "n": {"k": "a:b"}})
    assert _common.parse_arguments(text) == (real(text), None)
    assert reads == []
    # A real repeat still gets the exact reading, which names the key.
    repeated = '{"url": "https://x.test:8080/a", "n": {"k": 1, "k": 2}}'
    assert _common.parse_arguments(repeated) == (
        {},
        "arguments have a repeated key 'k' in one object",
    )
    assert reads == [repeated]
