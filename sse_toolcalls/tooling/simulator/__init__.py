"""A scripted LLM provider on a loopback port, for tests and demos.

The script and the encoders import no server; :class:`Simulator` imports uvicorn when it
starts. Users' tests can enable the ``simulator`` fixture with
``pytest_plugins = ["sse_toolcalls.tooling.simulator.pytest_plugin"]``.
"""

from __future__ import annotations

from .app import ReceivedResult, RecordedRequest, SimulatorApp, tool_results_in
from .encoders import (
    encode_corrupted,
    encode_cut,
    encode_cut_in_arguments,
    encode_error_event,
    encode_turn,
    error_body,
    error_headers,
    media_type,
)
from .script import (
    CorruptedCRC,
    Cut,
    CutInArguments,
    ErrorEvent,
    ExpectedResult,
    Fault,
    HTTPError,
    OneByteAtATime,
    RawBody,
    Script,
    ScriptedCall,
    Stall,
    Turn,
    default_demo_script,
    load_script,
    script_from_json,
)
from .server import Simulator

__all__ = [
    "CorruptedCRC",
    "Cut",
    "CutInArguments",
    "ErrorEvent",
    "ExpectedResult",
    "Fault",
    "HTTPError",
    "OneByteAtATime",
    "RawBody",
    "ReceivedResult",
    "RecordedRequest",
    "Script",
    "ScriptedCall",
    "Simulator",
    "SimulatorApp",
    "Stall",
    "Turn",
    "default_demo_script",
    "encode_corrupted",
    "encode_cut",
    "encode_cut_in_arguments",
    "encode_error_event",
    "encode_turn",
    "error_body",
    "error_headers",
    "load_script",
    "media_type",
    "script_from_json",
    "tool_results_in",
]
