"""The core's jobs in a fresh interpreter, and what they loaded (issue 30, item 4).

The import contract (tests/test_import_contract.py) reads the code; this runs it. For each
dialect: a recorded stream's bytes through ``ToolCallParser``, the same stream's events,
parsed as an SDK parses them, through ``parse_tool_calls``; a request with ``build_request``,
strict mode too; the calls' results with ``format_results``. Afterwards no async, HTTP or
schema library, nothing of the runtime or the tooling, and no server is in
``sys.modules``. ``strict=True`` once took the request builder through the tools package
to the sandbox and anyio, and later to jsonschema.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

NEVER_LOADED = (
    "anyio",
    "httpx",
    "httpx2",
    "jsonschema",
    "re2",
    "sse_toolcalls.runtime",
    "sse_toolcalls.tooling",
    "trio",
    "uvicorn",
)
"""Loaded by none of the core's jobs (a name stands for its submodules too)."""

STREAMS = {
    "openai_chat": "recorded_streams/openai_chat/two_calls_height_weight.sse",
    "openai_responses": "recorded_streams/openai_responses/two_calls_height_weight.sse",
    "anthropic": "recorded_streams/anthropic/two_calls_height_weight.sse",
    "gemini": "recorded_streams/gemini/two_calls_height_weight_one_event.sse",
    "bedrock_converse": "recorded_streams/bedrock_converse/two_calls_height_weight.eventstream",
    "bedrock_anthropic": "recorded_streams/bedrock_anthropic/two_calls_height_weight.eventstream",
}

# Run as its own program: the core's public names only, from the root face.
JOBS = """
import base64, json, sys
from sse_toolcalls.framing.eventstream import EventStreamFramer
from sse_toolcalls import (
    DIALECTS, SSEFramer, ToolCallParser, ToolResult, ToolSpec, UserMessage, build_request,
    format_results, parse_tool_calls,
)

streams = json.loads(sys.argv[1])
never = tuple(json.loads(sys.argv[2]))
spec = ToolSpec(
    name="weather",
    description="The weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["city"],
    },
)
done = {}
for dialect in DIALECTS:
    raw = open(streams[dialect], "rb").read()
    parser = ToolCallParser(dialect)
    calls = parser.feed(raw) + parser.finish()
    if raw[:1] == b"\\x00":
        # Bedrock: the events as boto3 yields them, {event type: payload}, a chunk's
        # bytes decoded.
        events = []
        for message in EventStreamFramer().feed(raw):
            payload = json.loads(message.payload)
            if message.event_type == "chunk":
                payload = {"bytes": base64.b64decode(payload["bytes"])}
            events.append({message.event_type: payload})
    else:
        framer = SSEFramer()
        events = [
            json.loads(event.data)
            for event in framer.feed(raw) + framer.finish()
            if event.data and event.data != "[DONE]"
        ]
    from_events = list(parse_tool_calls(events, dialect))
    conversation = [UserMessage(text="Height and weight?")]
    plain = build_request(dialect, conversation, [spec], model="m")
    strict = build_request(dialect, conversation, [spec], model="m", strict=True)
    results = format_results(ToolResult(call=call, content="ok") for call in calls)
    done[dialect] = {
        "calls": [[c.name, c.args] for c in calls],
        "same_from_events": [[c.name, c.args] for c in from_events] == [[c.name, c.args] for c in calls],
        "requests": bool(plain.get("tools") or plain["toolConfig"]["tools"]) and strict != plain,
        "results": len(results),
    }
loaded = sorted(
    m for m in sys.modules if any(m == n or m.startswith(n + ".") for n in never)
)
print(json.dumps({"done": done, "loaded": loaded}))
"""


def test_the_core_jobs_load_nothing_above_the_core() -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", JOBS, json.dumps(STREAMS), json.dumps(NEVER_LOADED)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["loaded"] == []
    # The jobs did their work: without it an empty list proves nothing.
    assert sorted(report["done"]) == sorted(STREAMS)
    for dialect, job in report["done"].items():
        assert len(job["calls"]) == 2, (dialect, job)
        assert job["same_from_events"], (dialect, job)
        assert job["requests"], (dialect, job)
        assert job["results"] >= 1, (dialect, job)
