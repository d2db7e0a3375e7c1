"""The compiled framer keeps a data line's UTF-8 with its text, so orjson.loads reads
it instead of encoding the text again (issue 16, items 1-3); the text is the pure twin's
in every case, the UTF-8 kept only where it is exactly the text's."""

from __future__ import annotations

import sys

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls.framing import sse as sse_module

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


# A line whose non-ASCII characters are all two- and three-byte sequences (U+0080-U+FFFF)
# is decoded by the framer itself (decode_bmp_utf8); anything else by CPython's decoder.
# Either way the text must be bytes.decode's, of the same kind (one or two bytes a
# character), with its UTF-8 kept.
TWO_BYTE = [chr(c) for c in (0x80, 0xA9, 0xE9, 0xFF, 0x100, 0x416, 0x5D0, 0x7FF)]
THREE_BYTE = [chr(c) for c in (0x800, 0xFFF, 0x1000, 0x20AC, 0x30C7, 0xD7FF, 0xE000, 0xFFFF)]
OTHERS = ["a", "z" * 20, "データ", "😀", "\x7f"]
INVALID = [
    b"\xc0\x80",
    b"\xc1\xbf",
    b"\xc2",
    b"\x80",
    b"\xdf\xc0",
    b"\xe0\x80\x80",  # overlong
    b"\xe0\x9f\xbf",  # overlong
    b"\xed\xa0\x80",  # a surrogate
    b"\xed\xbf\xbf",  # a surrogate
    b"\xe2\x82",  # truncated
    b"\xe2\x28\xa1",  # a bad continuation byte
    b"\xef\xbf\x3f",
    b"\xff",
]


def test_every_two_byte_character_is_decoded_as_the_standard_decoder_does() -> None:
    for code in range(0x80, 0x800):
        char = chr(code)
        for inner in (char, "a" * 17 + char, char + "b" * 33, "x" + char * 3 + "y" * 15):
            text = f'["{inner}"]'
            raw = b"data: " + text.encode() + b"\n\n"
            got = data_of(compiled, raw)  # type: ignore[arg-type]
            assert got == text, hex(code)
            assert not grows_when_loaded(got)  # its UTF-8 was kept


def test_every_three_byte_character_is_decoded_as_the_standard_decoder_does() -> None:
    # U+0800-U+FFFF but the surrogates, 64 to a line, each after a run of ASCII of a
    # different length, so that each lands at every offset of the 16-byte blocks.
    codes = [c for c in range(0x800, 0x10000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(codes), 64):
        inner = "".join(chr(c) + "a" * (c % 19) for c in codes[start : start + 64])
        text = f'["{inner}"]'
        got = data_of(compiled, b"data: " + text.encode() + b"\n\n")  # type: ignore[arg-type]
        assert got == text, hex(codes[start])
        assert not grows_when_loaded(got)  # its UTF-8 was kept


def test_a_two_byte_text_takes_the_smallest_kind() -> None:
    # CPython's own strs are of the smallest kind that holds their largest character;
    # a str of a larger kind compares unequal to the same characters.
    cases = (("é" * 10, 1), ("é" * 9 + "Ā", 2), ("ÿ" * 10, 1), ("ж" * 10, 2), ("é" * 9 + "€", 2))
    for text, size in cases:
        got = data_of(compiled, b"data: " + text.encode() + b"\n\n")  # type: ignore[arg-type]
        assert got == text  # equal strs are of one kind (CPython compares kinds first)
        copy = got + "!"  # a new str of got's kind, without the UTF-8 got carries
        assert sys.getsizeof(copy) - sys.getsizeof(copy[:-1] + "") == size


@given(
    parts=st.lists(
        st.one_of(
            st.sampled_from(TWO_BYTE + THREE_BYTE + OTHERS).map(str.encode),
            st.sampled_from(INVALID),
        ),
        max_size=40,
    )
)
@settings(max_examples=400, deadline=None)
def test_mixed_and_invalid_lines_equal_the_pure_twin(parts: list[bytes]) -> None:
    raw = b"data: " + b"".join(parts) + b"\n\n"
    got = data_of(compiled, raw)  # type: ignore[arg-type]
    assert got == data_of(pure, raw)
    assert orjson.dumps(got) == orjson.dumps(got.encode("utf-8", "surrogatepass").decode())


@given(st.text(alphabet=st.characters(max_codepoint=127, blacklist_characters="\r\n"), min_size=1))
@settings(max_examples=300, deadline=None)
def test_ascii_data_is_a_str_like_any_other(value: str) -> None:
    # On 3.11 the compiled framer builds an ASCII data line's str itself (new_ascii):
    # whichever way it is read, it must be the str CPython would have made.
    raw = f"data: {value}".encode()
    # Whole in one read (the whole-line path), CRLF-ended (the general path), and split
    # inside the value (the pending path).
    for reads in ([raw + b"\n\n"], [raw + b"\r\n\r\n"], [raw[:7], raw[7:] + b"\n\n"]):
        framer = compiled()  # type: ignore[misc]
        events = [e for read in reads for e in framer.feed(read)]
        text = events[0].data
        assert type(text) is str
        assert text == value and value == text
        assert len(text) == len(value)
        assert hash(text) == hash(value)
        assert text.isascii() and text.encode() == value.encode()
        assert sys.getsizeof(text) == sys.getsizeof(value)
        assert {value: 1}[text] == 1
        assert text + "!" == value + "!" and text[::-1] == value[::-1]
        assert sys.intern(text) == value
        assert orjson.loads(orjson.dumps(text)) == value
