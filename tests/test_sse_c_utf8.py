"""The compiled framer keeps a data line's UTF-8 with its text, so orjson.loads reads
it instead of encoding the text again (issue 16, items 1-3); the text is the pure twin's
in every case, the UTF-8 kept only where it is exactly the text's."""

from __future__ import annotations

import sys

import orjson
import pytest

from sse_toolcalls import sse as sse_module

compiled = sse_module._CSSEFramer
pure = sse_module._PySSEFramer
pytestmark = pytest.mark.skipif(compiled is None, reason="the C framer was not built")


def data_of(cls: type[sse_module.SSEFramer], raw: bytes) -> str:
    (event,) = cls().feed(raw)
    return event.data


def grows_when_loaded(text: str) -> bool:
    """Whether orjson had to make (and keep) the str's UTF-8: its size grows."""
    before = sys.getsizeof(text)
    orjson.loads(text)
    return sys.getsizeof(text) > before


@pytest.mark.parametrize(
    "value",
    ['{"a":"café"}', '{"a":"データ"}', '{"a":"😀 ok"}', '["é"]'],
)
@pytest.mark.parametrize("form", [b"data: %s\n\n", b"data:%s\r\n\r\n"])
def test_non_ascii_data_arrives_with_its_utf8(value: str, form: bytes) -> None:
    raw = form % value.encode()
    text = data_of(compiled, raw)  # type: ignore[arg-type]
    assert text == data_of(pure, raw) == value
    assert not grows_when_loaded(text)
    assert text.encode() == value.encode()


def test_invalid_utf8_is_replaced_and_its_bytes_not_kept() -> None:
    raw = b'data: ["caf\xc3", "\xed\xa0\x80", "\xff"]\n\n'
    text = data_of(compiled, raw)  # type: ignore[arg-type]
    assert text == data_of(pure, raw)
    assert "\ufffd" in text
    assert grows_when_loaded(text)  # orjson made the str's own UTF-8
    assert orjson.loads(text) == orjson.loads(text.encode())


def test_long_lines_and_multi_line_data_are_not_kept() -> None:
    big = '["' + "é" * 40_000 + '"]'  # 80,004 bytes, past KEEP_UTF8_MAX_BYTES
    text = data_of(compiled, f"data: {big}\n\n".encode())  # type: ignore[arg-type]
    assert text == big
    assert grows_when_loaded(text)
    joined = data_of(compiled, 'data: ["é",\ndata: 1]\n\n'.encode())  # type: ignore[arg-type]
    assert joined == '["é",\n1]'
    assert orjson.loads(joined) == ["é", 1]


def test_ascii_data_is_unchanged() -> None:
    text = data_of(compiled, b'data: {"a":1}\n\n')  # type: ignore[arg-type]
    assert text.isascii()
    assert sys.getsizeof(text) == sys.getsizeof('{"a":1}')
