"""The floor: the least work CPython can do for each workload, with no spec edge cases.

Framing is ``bytes.split`` on the blank-line separator with the unfinished tail carried as
a list of pieces (joined only when a separator arrives, so one huge event stays linear);
each event's JSON goes through ``orjson.loads`` once; argument fragments are appended to
lists and joined once per call. It ignores comments, multi-line data, CR line endings it was
not told about, ``id`` and ``retry``: it is a bound, not a parser anyone should ship.
"""

from __future__ import annotations

from collections.abc import Sequence

from orjson import loads

from .model import Call, Impl

__all__ = ["IMPLS", "frame"]


def frame(chunks: Sequence[bytes], sep: bytes = b"\n\n") -> list[str]:
    """Split a chunked body into event blocks (the text between separators), as ``str``.

    The tight floor (issue 16): one ``find`` per chunk, one ``decode`` and one ``split`` per
    chunk that completes events, list appends; the unfinished tail is carried as a list
    of pieces and joined once. No ``sep in chunk``: CPython 3.11's ``bytes.__contains__``
    first tries a ``bytes`` needle as an integer and raises and clears a ``TypeError`` on
    every call (about 120 ns), which made the old floor 2.2x too slow at 64 B chunks.
    """
    text_sep = sep.decode()
    k = len(sep)
    # A separator cut between the pending bytes and this chunk: each way to cut it.
    cuts = [(sep[:j], sep[j:]) for j in range(1, k)]
    blocks: list[str] = []
    pending: list[bytes] = []
    last = b""  # the pending bytes' last k - 1 bytes, where a cut separator may begin
    for chunk in chunks:
        if chunk.find(sep) < 0:
            straddles = False
            if pending:
                for left, right in cuts:
                    if last.endswith(left) and chunk.startswith(right):
                        straddles = True
                        break
            if not straddles:
                pending.append(chunk)
                last = chunk[1 - k :] if len(chunk) >= k - 1 else (last + chunk)[1 - k :]
                continue
        if pending:
            pending.append(chunk)
            buf = b"".join(pending)
            pending.clear()
        else:
            buf = chunk
        end = buf.rfind(sep) + k
        # One decode of every complete event in the chunk, without copying it first. The
        # split goes left to right, as the separators do: in "a\n\n\n" the last LF LF is
        # not the separator, so what the split leaves after it (separator characters
        # only, ASCII) starts the next block.
        parts = str(memoryview(buf)[:end], "utf-8").split(text_sep)
        rest = parts.pop()
        blocks += parts
        if rest or end < len(buf):
            tail = rest.encode() + buf[end:] if rest else buf[end:]
            pending.append(tail)
            last = tail[1 - k :]
    return blocks


def _frame_run(dialect: str, chunks: Sequence[bytes]) -> list[str]:
    return frame(chunks)


def _frame_normalize(blocks: list[str]) -> list[tuple[str, str]]:
    # Only for the equality check, never timed.
    events: list[tuple[str, str]] = []
    for block in blocks:
        kind = "message"
        data: list[str] = []
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            if name == "event":
                kind = value
            elif name == "data":
                data.append(value)
        if data:
            events.append((kind, "\n".join(data)))
    return events


def _chat(chunks: Sequence[bytes]) -> list[Call]:
    frags: dict[int, list[str]] = {}
    meta: dict[int, tuple[str, str]] = {}
    text: list[str] = []
    for block in frame(chunks):
        data = block.partition("data: ")[2]
        if data == "[DONE]":
            break
        for choice in loads(data)["choices"]:
            delta = choice["delta"]
            content = delta.get("content")
            if content:
                text.append(content)
            for tc in delta.get("tool_calls") or ():
                i = tc["index"]
                if "id" in tc:
                    meta[i] = (tc["id"], tc["function"]["name"])
                    frags[i] = []
                frags[i].append(tc["function"]["arguments"])
    return [(meta[i][0], meta[i][1], loads("".join(frags[i]))) for i in sorted(frags)]


def _responses(chunks: Sequence[bytes]) -> list[Call]:
    calls: list[Call] = []
    frags: dict[int, list[str]] = {}
    meta: dict[int, tuple[str, str]] = {}
    for block in frame(chunks):
        event = loads(block.partition("data: ")[2])
        kind = event["type"]
        if kind == "response.function_call_arguments.delta":
            frags[event["output_index"]].append(event["delta"])
        elif kind == "response.output_item.added":
            item = event["item"]
            if item["type"] == "function_call":
                meta[event["output_index"]] = (item["call_id"], item["name"])
                frags[event["output_index"]] = []
        elif kind == "response.function_call_arguments.done":
            i = event["output_index"]
            calls.append((meta[i][0], meta[i][1], loads("".join(frags.pop(i)))))
    return calls


def _anthropic(chunks: Sequence[bytes]) -> list[Call]:
    calls: list[Call] = []
    frags: dict[int, list[str]] = {}
    meta: dict[int, tuple[str, str]] = {}
    text: list[str] = []
    for block in frame(chunks):
        event = loads(block.partition("data: ")[2])
        kind = event["type"]
        if kind == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "input_json_delta":
                frags[event["index"]].append(delta["partial_json"])
            elif delta["type"] == "text_delta":
                text.append(delta["text"])
        elif kind == "content_block_start":
            cb = event["content_block"]
            if cb["type"] == "tool_use":
                meta[event["index"]] = (cb["id"], cb["name"])
                frags[event["index"]] = []
        elif kind == "content_block_stop":
            i = event["index"]
            if i in frags:
                calls.append((meta[i][0], meta[i][1], loads("".join(frags.pop(i)) or "{}")))
    return calls


def _gemini(chunks: Sequence[bytes]) -> list[Call]:
    calls: list[Call] = []
    text: list[str] = []
    for block in frame(chunks, b"\r\n\r\n"):
        for candidate in loads(block.partition("data: ")[2])["candidates"]:
            for part in candidate["content"]["parts"]:
                if "functionCall" in part:
                    fc = part["functionCall"]
                    calls.append((fc.get("id"), fc["name"], fc.get("args", {})))
                elif "text" in part:
                    text.append(part["text"])
    return calls


_BY_DIALECT = {
    "openai_chat": _chat,
    "openai_responses": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
}


def _calls_run(dialect: str, chunks: Sequence[bytes]) -> list[Call]:
    return _BY_DIALECT[dialect](chunks)


def _calls_normalize(calls: list[Call]) -> list[Call]:
    return calls


IMPLS = (
    Impl(
        name="floor",
        kind="framer",
        role="floor",
        dialects=("openai_chat", "openai_responses", "anthropic"),
        run=_frame_run,
        normalize=_frame_normalize,
    ),
    Impl(
        name="floor",
        kind="calls",
        role="floor",
        dialects=tuple(_BY_DIALECT),
        run=_calls_run,
        normalize=_calls_normalize,
    ),
)
