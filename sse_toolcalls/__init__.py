"""sse_toolcalls: streamed LLM tool calls, reassembled exactly, run safely.

The package has three layers, each with its own face:

- **the wire core**, this face: SSE framing, the provider dialects, the parser, the call
  and event types, conversations and requests, results, provider errors, and the edge
  functions that read a streamed response (``aiter_tool_calls(response)``). It imports
  only the standard library and orjson at load; HTTP clients and SDKs are reached
  through protocols.
- **the agent runtime**, :mod:`sse_toolcalls.runtime`: tools and validation, dispatch,
  ledgers, stores, retry, the breaker, approvals, tracing, clients, the sandbox
  (:mod:`sse_toolcalls.runtime.sandbox`) and MCP (:mod:`sse_toolcalls.runtime.mcp`).
- **the tooling**, :mod:`sse_toolcalls.tooling`: the simulator, the corpus tools, BFCL,
  the catalogue and the CLI.

``import sse_toolcalls`` loads no submodule: each name below is looked up on first use
(``_faces``), so ``from sse_toolcalls import SSEFramer`` loads the framer and its errors
and nothing else. The names that lived here before the layers (``Agent``, ``Tool``,
``Simulator``...) still resolve for one release, with a ``DeprecationWarning`` that
names their new home (``_moved``).
"""

from . import _moved
from ._faces import Face as _Face

# Not typing.TYPE_CHECKING: typing (with re, enum, functools, contextlib) is 41 M of the
# interpreter's instructions to import (callgrind, issue 16), more than the whole of the
# package's own import; mypy and pyright read any name TYPE_CHECKING as true.
TYPE_CHECKING = False

_FACE = _Face(__name__, globals(), __path__, moved=_moved.ROOT_NAMES)
_moved.install()

if not TYPE_CHECKING:
    # Hidden from type checkers, which see the names in the TYPE_CHECKING block below: a
    # visible module __getattr__ would make them accept any misspelt name; mypy gives
    # "from sse_toolcalls import *" nothing for an __all__ it cannot read, and takes the
    # "X as X" names instead, the same list.
    __all__ = _FACE.all()  # noqa: PLE0605

    def __getattr__(name: str) -> object:
        return _FACE.getattr(name)


def __dir__() -> list[str]:
    return _FACE.dir()


if TYPE_CHECKING:
    from ._event import ServerSentEvent as ServerSentEvent
    from .calls import DIALECTS as DIALECTS
    from .calls import Dialect as Dialect
    from .calls import Document as Document
    from .calls import Image as Image
    from .calls import MediaPart as MediaPart
    from .calls import PartialToolCall as PartialToolCall
    from .calls import ReasoningBlock as ReasoningBlock
    from .calls import ReasoningCompleted as ReasoningCompleted
    from .calls import ReasoningDelta as ReasoningDelta
    from .calls import StreamEvent as StreamEvent
    from .calls import StreamFinished as StreamFinished
    from .calls import TextDelta as TextDelta
    from .calls import ToolCall as ToolCall
    from .calls import ToolCallArgumentsDelta as ToolCallArgumentsDelta
    from .calls import ToolCallCompleted as ToolCallCompleted
    from .calls import ToolCallStarted as ToolCallStarted
    from .calls import ToolResult as ToolResult
    from .calls import ToolSpec as ToolSpec
    from .conversation import AssistantMessage as AssistantMessage
    from .conversation import Conversation as Conversation
    from .conversation import Message as Message
    from .conversation import SystemPrompt as SystemPrompt
    from .conversation import ToolResultsMessage as ToolResultsMessage
    from .conversation import UserMessage as UserMessage
    from .crossing import carry_over as carry_over
    from .dialects.naming import ToolNameMap as ToolNameMap
    from .dialects.naming import is_legal_name as is_legal_name
    from .edge.http_errors import provider_error_from_http as provider_error_from_http
    from .edge.responses import aiter_events as aiter_events
    from .edge.responses import aiter_events_from_sse as aiter_events_from_sse
    from .edge.responses import aiter_tool_calls as aiter_tool_calls
    from .edge.responses import aiter_tool_calls_from_sse as aiter_tool_calls_from_sse
    from .edge.responses import aparse_events as aparse_events
    from .edge.responses import aparse_tool_calls as aparse_tool_calls
    from .edge.responses import iter_events as iter_events
    from .edge.responses import iter_tool_calls as iter_tool_calls
    from .edge.responses import parse_events as parse_events
    from .edge.responses import parse_tool_calls as parse_tool_calls
    from .edge.sdk_errors import provider_error_from_sdk as provider_error_from_sdk
    from .edge.sdk_errors import translate_sdk_errors as translate_sdk_errors
    from .errors import EventTooLargeError as EventTooLargeError
    from .errors import FramingError as FramingError
    from .errors import LimitExceededError as LimitExceededError
    from .errors import MalformedStreamError as MalformedStreamError
    from .errors import ProviderError as ProviderError
    from .errors import SSEToolCallsError as SSEToolCallsError
    from .errors import StreamError as StreamError
    from .errors import StreamTimeoutError as StreamTimeoutError
    from .errors import TruncatedStreamError as TruncatedStreamError
    from .errors import UnknownDialectError as UnknownDialectError
    from .errors import UsageError as UsageError
    from .framing.sse import SSEFramer as SSEFramer
    from .messages import as_dialect as as_dialect
    from .messages import assistant_turn as assistant_turn
    from .messages import build_request as build_request
    from .messages import format_results as format_results
    from .messages import tool_declarations as tool_declarations
    from .parser import StreamParser as StreamParser
    from .parser import ToolCallParser as ToolCallParser

del TYPE_CHECKING  # not a public name of the package
