"""Issue 29, recordings: a key never reaches a written file or a ``replay`` output, in any
spelling a transport yields, and not in what the stream means once reassembled.

The oracle here is independent of ``sse_toolcalls._secrets``: it normalises text the way
a reader would (percent-decoding, JSON ``\\u`` escapes, case) and looks for the key.
"""

from __future__ import annotations

import base64
import gzip
import html
import io
import json
import logging
import re
import zlib
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote, unquote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sse_toolcalls.tooling.cli import main
from sse_toolcalls.tooling.corpus.record import Recorder, RecordingTransport

KEY = "sk-proj-Q7vX2mL9pA4tR8zK1wN6"
PATHS = {
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/m:streamGenerateContent?alt=sse",
}


# -- the oracle -------------------------------------------------------------------------


def _unescape(text: str) -> str:
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)


def spellings_found(data: bytes | str, key: str = KEY) -> list[str]:
    """How ``key`` shows in ``data``: plain, percent-decoded, unescaped, any mix, any case,
    base64 (the oracle's own decoding, not the library's)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    found = []
    views = {"plain": text, "html": html.unescape(text)}
    for _ in range(3):  # nested spellings: an escape inside a percent-encoding, ...
        views = {
            **views,
            **{f"{k}+unquoted": unquote(v) for k, v in views.items()},
            **{f"{k}+unescaped": _unescape(v) for k, v in views.items()},
        }
    for name, view in views.items():
        if key.lower() in view.lower().replace("\\/", "/"):
            found.append(name)
    for shift in range(3):
        core = base64.b64encode(b"\0" * shift + key.encode())[4:-4].decode()
        if core in text:
            found.append("base64")
    return found


def every_file(folder: Path) -> Iterator[Path]:
    return (p for p in sorted(folder.rglob("*")) if p.is_file())


def replay_output(path: Path) -> str:
    out = io.StringIO()
    for args in ([str(path)], [str(path), "--events"]):
        with redirect_stdout(out):
            main(["replay", *args])
    return out.getvalue()


def assert_key_nowhere(folder: Path, key: str = KEY) -> None:
    for path in every_file(folder):
        assert spellings_found(path.read_bytes(), key) == [], path
        if path.suffix == ".sse":
            assert spellings_found(replay_output(path), key) == [], path


# -- test streams ------------------------------------------------------------------------


def _string(text: str, escaped: frozenset[int] = frozenset()) -> str:
    """``text`` as a JSON string literal, the characters at ``escaped`` as ``\\uXXXX``."""
    out = []
    for i, char in enumerate(text):
        if i in escaped or char in '"\\' or ord(char) < 0x20:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _event(data: str, name: str | None = None) -> str:
    return (f"event: {name}\n" if name else "") + f"data: {data}\n\n"


def stream(dialect: str, pieces: list[str], *, where: str = "arguments") -> bytes:
    """One turn whose call's argument text (or whose message text) comes in ``pieces``,
    each already a JSON string literal as it goes on the wire."""
    out = []
    if dialect == "openai_chat":
        if where == "arguments":
            head = '{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":""}}'
            out.append(_event('{"choices":[{"index":0,"delta":{"tool_calls":[' + head + "]}}]}"))
            for p in pieces:
                delta = '{"index":0,"function":{"arguments":' + p + "}}"
                out.append(
                    _event('{"choices":[{"index":0,"delta":{"tool_calls":[' + delta + "]}}]}")
                )
            reason = "tool_calls"
        else:
            for p in pieces:
                out.append(_event('{"choices":[{"index":0,"delta":{"content":' + p + "}}]}"))
            reason = "stop"
        out.append(_event('{"choices":[{"index":0,"delta":{},"finish_reason":"' + reason + '"}]}'))
        out.append("data: [DONE]\n\n")
    elif dialect == "anthropic":
        out.append(_event('{"type":"message_start","message":{"usage":{}}}', "message_start"))
        if where == "arguments":
            block = '{"type":"tool_use","id":"t1","name":"f","input":{}}'
            kind, field = "input_json_delta", "partial_json"
        else:
            block = '{"type":"text","text":""}'
            kind, field = "text_delta", "text"
        start = '{"type":"content_block_start","index":0,"content_block":' + block + "}"
        out.append(_event(start, "content_block_start"))
        for p in pieces:
            delta = (
                '{"type":"content_block_delta","index":0,"delta":{"type":"'
                + kind
                + '","'
                + field
                + '":'
                + p
                + "}}"
            )
            out.append(_event(delta, "content_block_delta"))
        out.append(_event('{"type":"content_block_stop","index":0}', "content_block_stop"))
        reason = "tool_use" if where == "arguments" else "end_turn"
        stop = '{"type":"message_delta","delta":{"stop_reason":"' + reason + '"}}'
        out.append(_event(stop, "message_delta"))
        out.append(_event('{"type":"message_stop"}', "message_stop"))
    elif dialect == "openai_responses":
        out.append(_event('{"type":"response.created","response":{}}', "response.created"))
        if where == "arguments":
            item = '{"type":"function_call","id":"fc_0","call_id":"c1","name":"f","arguments":""}'
            added = '{"type":"response.output_item.added","output_index":0,"item":' + item + "}"
            out.append(_event(added, "response.output_item.added"))
            for p in pieces:
                kind = "response.function_call_arguments.delta"
                ev = '{"type":"' + kind + '","item_id":"fc_0","output_index":0,"delta":' + p + "}"
                out.append(_event(ev, kind))
            # The done events repeat the whole text: the key is whole there, and byte
            # redaction takes it out of them, leaving the deltas to the meaning check.
            whole = _string("".join(json.loads(p) for p in pieces))
            kind = "response.function_call_arguments.done"
            ev = (
                '{"type":"'
                + kind
                + '","item_id":"fc_0","output_index":0,"arguments":'
                + whole
                + "}"
            )
            out.append(_event(ev, kind))
            item = item.replace('"arguments":""', '"arguments":' + whole + ',"status":"completed"')
            kind = "response.output_item.done"
            out.append(_event('{"type":"' + kind + '","output_index":0,"item":' + item + "}", kind))
        else:
            for p in pieces:
                kind = "response.output_text.delta"
                out.append(_event('{"type":"' + kind + '","delta":' + p + "}", kind))
        done = '{"type":"response.completed","response":{"status":"completed"}}'
        out.append(_event(done, "response.completed"))
    elif dialect == "gemini" and where == "arguments":
        # A call's arguments streamed as partialArgs (Gemini 3): here each piece is a
        # piece of the value of "q", not of the JSON text.
        def parts(part: str) -> str:
            return _event('{"candidates":[{"content":{"role":"model","parts":[' + part + "]}}]}")

        out.append(parts('{"functionCall":{"name":"f","willContinue":true}}'))
        for p in pieces:
            arg = '{"jsonPath":"$.q","stringValue":' + p + ',"willContinue":true}'
            out.append(parts('{"functionCall":{"partialArgs":[' + arg + '],"willContinue":true}}'))
        out.append(parts('{"functionCall":{}}'))
        last = '{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP"}]}'
        out.append(_event(last))
    elif dialect == "gemini":
        # Gemini sends text in parts.
        for p in pieces:
            part = '{"text":' + p + "}"
            out.append(
                _event('{"candidates":[{"content":{"role":"model","parts":[' + part + "]}}]}")
            )
        last = '{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP"}]}'
        out.append(_event(last))
    return "".join(out).encode()


class Chunks(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks


def record(
    folder: Path,
    dialect: str,
    body: bytes,
    *,
    headers: dict[str, str],
    query: str = "",
    encoding: str | None = None,
    reads: int = 3,
    status: int = 200,
) -> Recorder:
    """Record ``body`` as the answer of a request carrying ``headers`` and ``query``."""
    response_headers = {"content-type": "text/event-stream"}
    if encoding is not None:
        response_headers["content-encoding"] = encoding
    size = max(1, len(body) // reads)
    chunks = [body[i : i + size] for i in range(0, len(body), size)]

    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers=response_headers, stream=Chunks(chunks))

    recorder = Recorder(folder)
    transport = RecordingTransport(httpx.MockTransport(upstream), recorder)
    path = PATHS[dialect]
    url = "http://upstream" + path + (("&" if "?" in path else "?") + query if query else "")
    with (
        httpx.Client(transport=cast(httpx.BaseTransport, transport)) as http,
        http.stream("POST", url, headers=headers) as response,
    ):
        response.read()
    return recorder


def arguments_pieces(value: str, size: int) -> list[str]:
    text = json.dumps({"q": value})
    return [_string(text[i : i + size]) for i in range(0, len(text), size)]


AUTH = {
    "openai_chat": {"authorization": f"Bearer {KEY}"},
    "openai_responses": {"authorization": f"Bearer {KEY}"},
    "anthropic": {"x-api-key": KEY},
    "gemini": {"x-goog-api-key": KEY},
}


# -- example 5 -------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["openai_chat", "anthropic", "openai_responses"])
def test_a_key_echoed_split_across_argument_deltas_is_not_written(
    dialect: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Before: each delta held 4 characters of the key, byte redaction found none of them,
    # and `replay` of the written file printed the key whole in the call's arguments.
    caplog.set_level(logging.DEBUG, logger="sse_toolcalls")
    body = stream(dialect, arguments_pieces(f"echo {KEY}", 4))
    recorder = record(tmp_path, dialect, body, headers=AUTH[dialect])
    assert recorder.entries == []
    (withheld,) = recorder.withheld
    assert "survives in the reassembled stream" in withheld["reason"]
    assert_key_nowhere(tmp_path)
    # Parsing it to check (Responses' deltas differ from the redacted done text: a
    # WARNING quotes both) logs no key either.
    for log_record in caplog.records:
        assert spellings_found(log_record.getMessage() + repr(vars(log_record))) == []


@pytest.mark.parametrize("dialect", list(PATHS))
def test_a_key_echoed_split_across_text_deltas_is_not_written(dialect: str, tmp_path: Path) -> None:
    pieces = [_string(f"your key {KEY} is"[i : i + 5]) for i in range(0, 24 + len(KEY), 5)]
    recorder = record(
        tmp_path, dialect, stream(dialect, pieces, where="text"), headers=AUTH[dialect]
    )
    assert recorder.entries == [] and len(recorder.withheld) == 1
    assert_key_nowhere(tmp_path)


def test_a_key_echoed_split_across_gemini_partial_args_is_not_written(tmp_path: Path) -> None:
    half = len(KEY) // 2

    def event(part: dict[str, Any], finish: bool = False) -> str:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}}
        if finish:
            candidate["finishReason"] = "STOP"
        return f"data: {json.dumps({'candidates': [candidate]})}\n\n"

    # The shape Gemini streams a call's arguments in (tests/core/test_parser.py has it too).
    first = {"jsonPath": "$.q", "stringValue": KEY[:half], "willContinue": True}
    second = {"jsonPath": "$.q", "stringValue": KEY[half:]}
    body = (
        event({"functionCall": {"name": "f", "willContinue": True}})
        + event({"functionCall": {"partialArgs": [first], "willContinue": True}})
        + event({"functionCall": {"partialArgs": [second], "willContinue": True}})
        + event({"functionCall": {}})
        + event({"text": "done"}, finish=True)
    ).encode()
    recorder = record(tmp_path, "gemini", body, headers=AUTH["gemini"])
    assert recorder.entries == [] and len(recorder.withheld) == 1
    assert_key_nowhere(tmp_path)


def test_a_percent_encoded_query_key_echoed_is_redacted(tmp_path: Path) -> None:
    # The key went in the query percent-encoded; the server echoed it as it was sent.
    sent = quote(KEY, safe="")
    shown = sent.replace("-", "%2D")  # a spelling with more escapes than needed
    body = stream("gemini", [_string(f"bad key={shown}&alt=sse")], where="text")
    recorder = record(tmp_path, "gemini", body, headers={}, query="key=" + shown)
    (entry,) = recorder.entries
    assert "[REDACTED]" in (tmp_path / entry["file"]).read_text()
    assert "key=%5BREDACTED%5D" in entry["path"] or "key=[REDACTED]" in entry["path"]
    assert_key_nowhere(tmp_path)


def test_a_key_after_bearer_and_two_spaces_is_redacted(tmp_path: Path) -> None:
    # Before: the value was split at its first space, so " sk-..." was learnt, and the
    # key echoed on its own stayed in the file.
    body = stream("openai_chat", [_string(f"invalid key {KEY}")], where="text")
    recorder = record(tmp_path, "openai_chat", body, headers={"Authorization": f"Bearer  \t{KEY} "})
    (entry,) = recorder.entries
    assert "[REDACTED]" in (tmp_path / entry["file"]).read_text()
    assert_key_nowhere(tmp_path)


@pytest.mark.parametrize(
    "encoding, pack",
    [
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate: no zlib wrapper
        ("deflate", zlib.compress),
        ("gzip", gzip.compress),
    ],
    ids=["raw-deflate", "zlib-deflate", "gzip"],
)
def test_a_key_inside_a_compressed_body_is_redacted(
    encoding: str, pack: Any, tmp_path: Path
) -> None:
    # Before: zlib's 32+15 read gzip and zlib only, so raw deflate failed to inflate and
    # was written compressed, the key inside it.
    body = stream("anthropic", [_string(f"invalid x-api-key {KEY}")], where="text")
    recorder = record(
        tmp_path, "anthropic", pack(body), headers=AUTH["anthropic"], encoding=encoding
    )
    (entry,) = recorder.entries
    written = (tmp_path / entry["file"]).read_bytes()
    assert written == body.replace(KEY.encode(), b"[REDACTED]")
    assert_key_nowhere(tmp_path)


def test_an_encoding_the_recorder_cannot_undo_is_not_written(tmp_path: Path) -> None:
    body = stream("anthropic", [_string(f"key {KEY}")], where="text")
    recorder = record(tmp_path, "anthropic", body, headers=AUTH["anthropic"], encoding="x-custom")
    assert recorder.entries == []
    assert "cannot be decoded" in recorder.withheld[0]["reason"]
    assert_key_nowhere(tmp_path)


def test_a_body_that_inflates_to_the_key_unannounced_is_not_written(tmp_path: Path) -> None:
    # No content-encoding header: the bytes are gzip all the same, and a reader inflates them.
    body = gzip.compress(f"data: {KEY}\n\n".encode())
    recorder = record(tmp_path, "anthropic", body, headers=AUTH["anthropic"], reads=1)
    assert recorder.entries == [] and "inflates" in recorder.withheld[0]["reason"]


# -- neighbours ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    [
        KEY.upper(),
        _string(KEY, frozenset(range(0, len(KEY), 2)))[1:-1],  # \u escapes in the bytes
        base64.b64encode(b"token:" + KEY.encode()).decode(),
        quote(KEY, safe="").replace("-", "%2d"),
        "&#115;&#x6B;" + KEY[2:],  # HTML character references
        quote(quote(KEY, safe=""), safe="").replace("-", "%252D"),  # quoted twice
    ],
    ids=[
        "upper-case",
        "json-escaped",
        "base64",
        "percent-lower-hex",
        "html-references",
        "percent-twice",
    ],
)
def test_every_spelling_of_an_echoed_key_is_redacted(spelling: str, tmp_path: Path) -> None:
    body = stream("anthropic", [_string("x ") + "", f'"{spelling}"'], where="text")
    record(tmp_path, "anthropic", body, headers=AUTH["anthropic"])
    assert_key_nowhere(tmp_path)


def test_a_key_in_an_sse_comment_an_event_name_and_a_kept_header(tmp_path: Path) -> None:
    body = f": debug {KEY}\nevent: e-{KEY}\ndata: {{}}\n\n".encode() + stream(
        "anthropic", [_string("hi")], where="text"
    )
    response_headers = {"content-type": "text/event-stream", "x-request-id": f"req {KEY}"}

    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=response_headers, stream=Chunks([body]))

    recorder = Recorder(tmp_path)
    transport = RecordingTransport(httpx.MockTransport(upstream), recorder)
    with httpx.Client(transport=cast(httpx.BaseTransport, transport)) as http:
        http.post("http://h/v1/messages", headers={"X-Api-Key": KEY}).read()
    (entry,) = recorder.entries
    assert entry["headers"]["x-request-id"] == "req [REDACTED]"
    assert_key_nowhere(tmp_path)


def test_a_cookie_and_a_vendor_token_header_are_credentials(tmp_path: Path) -> None:
    token = "tok-ABCDEFGH12345"
    body = stream("anthropic", [_string(f"{token} and {KEY}")], where="text")
    record(
        tmp_path,
        "anthropic",
        body,
        headers={"Cookie": f"session={KEY}; theme=dark", "X-Vendor-Token": token},
    )
    assert_key_nowhere(tmp_path)
    assert_key_nowhere(tmp_path, token)


# -- the property ------------------------------------------------------------------------------


@st.composite
def key_spellings(draw: st.DrawFn) -> tuple[str, str]:
    """A way to send the key, and the key as the server echoes it in the value."""
    how = draw(st.sampled_from(["bearer", "x-api-key", "x-goog-api-key", "api-key", "query"]))
    echo = []
    for char in KEY:
        form = draw(st.sampled_from(["plain", "plain", "upper", "percent", "percent2", "escape"]))
        if form == "upper":
            echo.append(char.upper())
        elif form == "percent":
            echo.append(f"%{ord(char):02X}")
        elif form == "percent2":  # quoted twice, as a proxy re-quoting a URL writes it
            echo.append(f"%25{ord(char):02x}")
        elif form == "escape":
            # A \u escape in the value's own text (a JSON document inside the arguments).
            echo.append(f"\\u{ord(char):04x}")
        else:
            echo.append(char)
    return how, "".join(echo)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    dialect=st.sampled_from(list(PATHS)),
    where=st.sampled_from(["arguments", "text"]),
    spelling=key_spellings(),
    size=st.integers(1, 12),
    outer_escapes=st.frozensets(st.integers(0, 200), max_size=30),
    compression=st.sampled_from([None, "gzip", "deflate", "raw-deflate"]),
    reads=st.integers(1, 7),
)
def test_no_spelling_of_the_key_is_written_or_replayed(
    tmp_path_factory: pytest.TempPathFactory,
    dialect: str,
    where: str,
    spelling: tuple[str, str],
    size: int,
    outer_escapes: frozenset[int],
    compression: str | None,
    reads: int,
) -> None:
    how, echo = spelling
    value = f"the key is {echo}."
    # Gemini's partialArgs carry pieces of the value; the others pieces of the JSON text.
    text = json.dumps({"q": value}) if where == "arguments" and dialect != "gemini" else value
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    wire_pieces = [_string(p, frozenset(i for i in outer_escapes if i < len(p))) for p in pieces]
    body = stream(dialect, wire_pieces, where=where)
    headers: dict[str, str] = {}
    query = ""
    if how == "bearer":
        headers["AUTHORIZATION"] = "Bearer" + " " * (1 + len(echo) % 3) + KEY
    elif how == "query":
        query = "Key=" + quote(KEY, safe="")
    else:
        headers[how] = KEY
    encoding: str | None = None
    if compression == "gzip":
        body, encoding = gzip.compress(body), "gzip"
    elif compression == "deflate":
        body, encoding = zlib.compress(body), "deflate"
    elif compression == "raw-deflate":
        body, encoding = zlib.compress(body)[2:-4], "deflate"
    folder = tmp_path_factory.mktemp("corpus")
    recorder = record(
        folder, dialect, body, headers=headers, query=query, encoding=encoding, reads=reads
    )
    assert len(recorder.entries) + len(recorder.withheld) == 1
    assert_key_nowhere(folder)


def test_the_auth_scheme_is_not_taken_for_a_secret(tmp_path: Path) -> None:
    body = stream("openai_chat", [_string("a Bearer token, then the key " + KEY)], where="text")
    recorder = record(tmp_path, "openai_chat", body, headers=AUTH["openai_chat"])
    (entry,) = recorder.entries
    assert (tmp_path / entry["file"]).read_text().count("Bearer token") == 1
    assert_key_nowhere(tmp_path)


def test_a_compression_bomb_is_withheld_not_inflated_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sse_toolcalls.tooling.corpus import record as record_module

    monkeypatch.setattr(record_module, "MAX_DECODED_BYTES", 10_000)
    body = gzip.compress(b": " + b"x" * 50_000 + b"\n\n")
    recorder = record(tmp_path, "anthropic", body, headers=AUTH["anthropic"], encoding="gzip")
    assert recorder.entries == [] and "inflates past" in recorder.withheld[0]["reason"]


def test_a_body_that_lies_about_its_encoding_is_withheld(tmp_path: Path) -> None:
    # Before, the rest of the body was written as it came, unchecked.
    body = stream("anthropic", [_string(f"key {KEY}")], where="text")
    headers = {"content-type": "text/event-stream", "content-encoding": "gzip"}

    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=headers, stream=Chunks([body]))

    recorder = Recorder(tmp_path)
    transport = RecordingTransport(httpx.MockTransport(upstream), recorder)
    with (
        httpx.Client(transport=cast(httpx.BaseTransport, transport)) as http,
        http.stream("POST", "http://h/v1/messages", headers=AUTH["anthropic"]) as response,
    ):
        b"".join(response.iter_raw())  # the raw bytes: a client that does not inflate
    assert recorder.entries == [] and "did not decode" in recorder.withheld[0]["reason"]
    assert_key_nowhere(tmp_path)


def test_br_is_decoded_with_a_brotli_module_and_withheld_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys
    import types

    body = stream("anthropic", [_string(f"invalid x-api-key {KEY}")], where="text")
    monkeypatch.setitem(sys.modules, "brotli", None)  # None: "import brotli" fails
    monkeypatch.setitem(sys.modules, "brotlicffi", None)
    recorder = record(
        tmp_path / "without", "anthropic", body, headers=AUTH["anthropic"], encoding="br"
    )
    assert recorder.entries == [] and "'br' cannot be decoded" in recorder.withheld[0]["reason"]

    # A stand-in brotli whose "compression" is base64: the recorder's plumbing is what
    # is checked here, not brotli's (the test extra does not install it).
    class Decompressor:
        def process(self, data: bytes) -> bytes:
            return base64.b64decode(data)

    fake = types.ModuleType("brotli")
    fake.Decompressor = Decompressor  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "brotli", fake)
    folder = tmp_path / "with"
    headers = {"content-type": "text/event-stream", "content-encoding": "br"}

    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=headers, stream=Chunks([base64.b64encode(body)]))

    recorder = Recorder(folder)
    transport = RecordingTransport(httpx.MockTransport(upstream), recorder)
    with (
        httpx.Client(transport=cast(httpx.BaseTransport, transport)) as http,
        http.stream("POST", "http://h/v1/messages", headers=AUTH["anthropic"]) as response,
    ):
        b"".join(response.iter_raw())
    (entry,) = recorder.entries
    assert (folder / entry["file"]).read_bytes() == body.replace(KEY.encode(), b"[REDACTED]")
    assert_key_nowhere(folder)
