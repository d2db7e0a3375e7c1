"""A dialect is one folder and a framing one entry (issue 30, items 5 and 8): what the
parser frames with comes from the dialect's spec, a new framing is one table entry, and
the dialect modules import one another without a circle."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from sse_toolcalls import (
    ProviderError,
    StreamParser,
    ToolCallCompleted,
    ToolCallParser,
    UsageError,
    iter_tool_calls,
)
from sse_toolcalls.dialects import SPECS
from sse_toolcalls.framing import FRAMINGS, SSE, Framing, framing_for
from sse_toolcalls.framing.sse import ServerSentEvent
from sse_toolcalls.tooling.simulator.encoders import encode_turn
from sse_toolcalls.tooling.simulator.script import ScriptedCall, Turn

PACKAGE = Path(__file__).resolve().parents[2] / "sse_toolcalls"


class LineFramer:
    """A toy framing: one JSON object per line (no provider's, the seam's test double)."""

    def __init__(self, *, max_event_bytes: int) -> None:
        self.max_event_bytes = max_event_bytes
        self._pending = b""

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        *lines, self._pending = (self._pending + data).split(b"\n")
        return [ServerSentEvent("message", line.decode(), "", None) for line in lines if line]

    def finish(self, *, unterminated: object = None) -> list[ServerSentEvent]:
        return []


LINES = Framing(
    name="lines",
    framer=LineFramer,
    media_type="application/x-ndjson",
    # JSON lines open with "{" (which SSE's test refuses); a markup page is no such body.
    foreign=lambda head: head[:1] == b"<",
)


def _chat_as_lines() -> bytes:
    """A Chat turn with one call, its chunks one per line."""
    turn = Turn(calls=(ScriptedCall(name="get_weather", args={"city": "Paris"}),))
    return b"".join(
        event.split(b"data: ", 1)[1].rstrip(b"\n") + b"\n"
        for event in encode_turn("openai_chat", turn)
        if event.startswith(b"data: {")
    )


class Body:
    """A 200 response look-alike of one content type, in one-byte chunks."""

    def __init__(self, body: bytes, content_type: str) -> None:
        self.status_code = 200
        self.headers = {"content-type": content_type}
        self.body = body

    def iter_bytes(self) -> Iterator[bytes]:
        yield from (self.body[i : i + 1] for i in range(len(self.body)))

    def close(self) -> None:
        pass


def test_every_dialect_names_a_registered_framing() -> None:
    for spec in SPECS.values():
        assert framing_for(spec.framing) is FRAMINGS[spec.framing]
    assert framing_for(SSE).name == SSE


def test_an_unknown_framing_is_our_error() -> None:
    with pytest.raises(UsageError, match="no framing is named"):
        framing_for("carrier-pigeon")
    with pytest.raises(UsageError):
        framing_for([])  # type: ignore[arg-type]


def test_the_parser_frames_with_the_framing_its_dialect_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Chat's chunks, one per line instead of one per SSE event: only a parser that takes
    # its framer from the spec reads them.
    monkeypatch.setitem(FRAMINGS, "lines", LINES)
    monkeypatch.setitem(
        SPECS, "openai_chat", dataclasses.replace(SPECS["openai_chat"], framing="lines")
    )
    lines = _chat_as_lines()
    parser = ToolCallParser("openai_chat")
    calls = [call for i in range(len(lines)) for call in parser.feed(lines[i : i + 1])]
    calls += parser.finish()
    assert [(c.name, c.args) for c in calls] == [("get_weather", {"city": "Paris"})]
    # The same bytes framed as SSE (the dialect's own framing) hold no event at all.
    monkeypatch.setitem(
        SPECS, "openai_chat", dataclasses.replace(SPECS["openai_chat"], framing=SSE)
    )
    sse_parser = StreamParser("openai_chat")
    assert not [e for e in sse_parser.feed(lines) if isinstance(e, ToolCallCompleted)]


def test_the_edge_reads_a_body_in_the_dialects_framing_and_media_type(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(FRAMINGS, "lines", LINES)
    monkeypatch.setitem(
        SPECS, "openai_chat", dataclasses.replace(SPECS["openai_chat"], framing="lines")
    )
    lines = _chat_as_lines()
    calls = list(iter_tool_calls(Body(lines, "application/x-ndjson"), "openai_chat"))
    assert [(c.name, c.args) for c in calls] == [("get_weather", {"city": "Paris"})]
    # A 2xx body must have a framing's media type (any framing's: a body in another
    # framing than the dialect's is named by its first event); the new one counts.
    with pytest.raises(ProviderError, match="application/x-ndjson") as caught:
        list(iter_tool_calls(Body(lines, "text/plain"), "openai_chat"))
    assert caught.value.code == "unexpected_content_type"
    # And the framing's own test of the first bytes: a proxy's page is no body of it.
    page = b"<!DOCTYPE html><title>502 Bad Gateway</title>\n"
    with pytest.raises(ProviderError) as caught:
        list(iter_tool_calls(Body(page, "application/x-ndjson"), "openai_chat"))
    assert caught.value.code == "not_an_event_stream"


def test_a_spec_naming_no_registered_framing_fails_at_construction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(
        SPECS, "anthropic", dataclasses.replace(SPECS["anthropic"], framing="nowhere")
    )
    with pytest.raises(UsageError, match="no framing is named 'nowhere'"):
        StreamParser("anthropic")


# Import circles among the dialects, the framings and the naming rules are checked with
# the whole package's graph, in one place: tests/test_import_contract.py.


def test_each_endpoint_marker_names_its_dialect_alone() -> None:
    # A recorded exchange's dialect is read from its URL path by these markers: none may
    # be found in another dialect's endpoint.
    for spec in SPECS.values():
        others = [o.name for o in SPECS.values() if o is not spec and spec.endpoint in o.endpoint]
        assert others == [], spec.name
