"""The simulator's ASGI application: each dialect at its real path, scripted turns,
checks on every request, fault injection.

Plain ASGI (no framework), so any ASGI server can host it; :mod:`.server` runs it under
uvicorn on a loopback port. The app is used from the server's thread and read from the
test's thread: shared state is guarded by a lock.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qs

import anyio
import anyio.lowlevel
import orjson

from ..._logging import log
from ...errors import UsageError
from . import media as _media
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
from .pairing import last_turn, listed, pairing_problems
from .reasoning import (
    IssuedBlock,
    asks_encrypted,
    check_request,
    gemini_3_problems,
    issued_blocks,
    step_signature,
)
from .script import (
    CorruptedCRC,
    Cut,
    CutInArguments,
    ErrorEvent,
    HTTPError,
    OneByteAtATime,
    RawBody,
    Script,
    ScriptedCall,
    Stall,
    Turn,
    resolved_call_id,
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

logger = logging.getLogger("sse_toolcalls.tooling.simulator")

Restart = Literal["never", "conversation", "loop"]
"""When the script starts again from its first turn: ``never`` (each turn answers one
request, in arrival order, then every request is a "no turn left" problem: what a test
wants); ``conversation`` (a request that opens a conversation, with no assistant turn in
it, starts the script again, unless it follows a turn whose fault left the client
without an answer, which it is retrying: ``sse-toolcalls serve``, so each new client
gets the whole script); ``loop`` (after the last turn, the first again, whatever the
request: ``serve --loop``)."""

# Faults after which nothing complete reached the client: it asks again.
_FAILING_FAULTS = (CutInArguments, Cut, CorruptedCRC, ErrorEvent, HTTPError, Stall, RawBody)

MAX_REQUEST_BYTES = 32 * 1024 * 1024
"""Largest request body accepted, in bytes: a long conversation with big tool results
stays far below; past it the simulator answers 413 rather than hold the memory."""

_GEMINI_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_PATHS = {
    "/v1/chat/completions": "openai_chat",
    "/chat/completions": "openai_chat",
    "/v1/responses": "openai_responses",
    "/responses": "openai_responses",
    "/v1/messages": "anthropic",
}
# Bedrock Runtime: the model id (or an ARN, its slashes escaped) in the path.
_BEDROCK_PATH = re.compile(
    r"^/model/(?P<model>.+)/(?P<operation>converse-stream|invoke-with-response-stream)$"
)
_BEDROCK_OPERATIONS = {
    "converse-stream": "bedrock_converse",
    "invoke-with-response-stream": "bedrock_anthropic",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ReceivedResult:
    """A tool result found in a request, in the neutral shape the checks use."""

    call_id: str | None
    """The id it is addressed to (``tool_call_id``, ``call_id``, ``tool_use_id``, Gemini
    ``functionResponse.id``), or ``None`` when it carries none."""

    name: str | None
    """The function name, where the dialect sends one (Gemini; Chat's optional ``name``)."""

    content: str
    """The result content as text (JSON text when it is structured)."""

    is_error: bool | None
    """The error flag where the dialect has one (Anthropic ``is_error``), else ``None``."""

    media: tuple[str, ...] = ()
    """The MIME types of the images and documents it carries, in order (``image:url``
    and the like for one given by URL)."""

    problems: tuple[str, ...] = ()
    """What the API would refuse about its shape (see :mod:`.media`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRequest:
    """One request the simulator received."""

    dialect: str
    """The dialect of the path it was sent to."""

    path: str
    """The request path."""

    query: dict[str, list[str]]
    """The parsed query string."""

    headers: dict[str, str]
    """The headers, names in lower case."""

    body: Any
    """The parsed JSON body (``None`` when it was not JSON)."""

    turn_number: int
    """Which scripted turn answered it (0-based); -1 when none was left."""

    results: tuple[ReceivedResult, ...]
    """The tool results the request carries, in request order."""


# --------------------------------------------------------------------------------------
# Reading tool results out of each dialect's request body.


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [part.get("text", "") if isinstance(part, dict) else str(part) for part in content]
        if all(isinstance(t, str) for t in texts):
            return "".join(texts)
    return orjson.dumps(content).decode()


def _chat_results(body: dict[str, Any]) -> list[ReceivedResult]:
    return [
        ReceivedResult(
            call_id=m.get("tool_call_id"),
            name=m.get("name"),
            content=_text_of(m.get("content")),
            is_error=None,
            problems=tuple(_media.chat(m.get("content"))[1]),
        )
        for m in listed(body.get("messages"))
        if isinstance(m, dict) and m.get("role") == "tool"
    ]


def _responses_results(body: dict[str, Any]) -> list[ReceivedResult]:
    items = body.get("input")
    if not isinstance(items, list):
        return []
    found: list[ReceivedResult] = []
    for item in items:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            types, problems = _media.responses(item.get("output"))
            found.append(
                ReceivedResult(
                    call_id=item.get("call_id"),
                    name=None,
                    content=_text_of(item.get("output")),
                    is_error=None,
                    media=tuple(types),
                    problems=tuple(problems),
                )
            )
    return found


def _anthropic_results(body: dict[str, Any]) -> list[ReceivedResult]:
    found: list[ReceivedResult] = []
    for message in listed(body.get("messages")):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                flag = block.get("is_error")
                types, problems = _media.anthropic(block.get("content"))
                found.append(
                    ReceivedResult(
                        call_id=block.get("tool_use_id"),
                        name=None,
                        content=_text_of(block.get("content", "")),
                        is_error=bool(flag) if flag is not None else False,
                        media=tuple(types),
                        problems=tuple(problems),
                    )
                )
    return found


def _converse_text(content: Any) -> str:
    if not isinstance(content, list):
        return _text_of(content)
    texts = []
    for block in content:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif isinstance(block, dict) and "json" in block:
            texts.append(orjson.dumps(block["json"]).decode())
    return "".join(texts)


def _converse_results(body: dict[str, Any]) -> list[ReceivedResult]:
    found: list[ReceivedResult] = []
    for message in listed(body.get("messages")):
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            result = block.get("toolResult") if isinstance(block, dict) else None
            if isinstance(result, dict):
                types, problems = _media.converse(result.get("content"))
                status = result.get("status")
                if status not in (None, "success", "error"):
                    problems.append(f"toolResult.status: {status!r} is not success or error")
                found.append(
                    ReceivedResult(
                        call_id=result.get("toolUseId"),
                        name=None,
                        content=_converse_text(result.get("content")),
                        is_error=status == "error",
                        media=tuple(types),
                        problems=tuple(problems),
                    )
                )
    return found


def _gemini_results(body: dict[str, Any]) -> list[ReceivedResult]:
    found: list[ReceivedResult] = []
    for content in listed(body.get("contents")):
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in listed(parts):
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                types, problems = _media.gemini(response)
                found.append(
                    ReceivedResult(
                        call_id=response.get("id"),
                        name=response.get("name"),
                        content=_text_of(response.get("response")),
                        is_error=None,
                        media=tuple(types),
                        problems=tuple(problems),
                    )
                )
    return found


_RESULT_READERS: dict[str, Callable[[dict[str, Any]], list[ReceivedResult]]] = {
    "openai_chat": _chat_results,
    "openai_responses": _responses_results,
    "anthropic": _anthropic_results,
    "gemini": _gemini_results,
    "bedrock_converse": _converse_results,
    "bedrock_anthropic": _anthropic_results,
}


def tool_results_in(dialect: str, body: Any) -> list[ReceivedResult]:
    """The tool results a request body of ``dialect`` carries, in order."""
    if not isinstance(body, dict):
        return []
    return _RESULT_READERS[dialect](body)


# --------------------------------------------------------------------------------------
# The application.


@dataclass(frozen=True, slots=True, kw_only=True)
class _IssuedCall:
    call: ScriptedCall
    call_id: str | None
    position: int


class SimulatorApp:
    """An ASGI app playing a :class:`Script`, one turn per request, in arrival order."""

    def __init__(self, script: Script, *, restart: Restart = "never") -> None:
        if restart not in ("never", "conversation", "loop"):
            raise UsageError(f"restart must be never, conversation or loop, not {restart!r}")
        self._lock = threading.Lock()
        self._script = script
        self._restart = restart
        self._retrying = False  # the last turn taken left its client without an answer
        self._next_turn = 0
        self._requests: list[RecordedRequest] = []
        self._problems: list[str] = []
        self._issued: list[_IssuedCall] = []
        self._issued_reasoning: list[IssuedBlock] = []
        self._issued_dialect: str | None = None
        self._cross = False
        self._all_ids: set[str] = set()
        self._signed: set[str] = set()
        """Every Gemini thought signature streamed (Gemini 3 takes back only its own)."""

    # -- state shared with the test's thread ---------------------------------------

    def reset(self, script: Script, *, keep_ids: bool = False) -> None:
        """Play ``script`` from its first turn; forget earlier requests and problems
        (and the call ids issued so far, unless ``keep_ids``)."""
        with self._lock:
            self._script = script
            self._next_turn = 0
            self._requests.clear()
            self._problems.clear()
            self._issued = []
            self._issued_reasoning = []
            self._issued_dialect = None
            if not keep_ids:
                self._all_ids.clear()
                self._signed.clear()

    @property
    def requests(self) -> tuple[RecordedRequest, ...]:
        """Every request received so far, in arrival order."""
        with self._lock:
            return tuple(self._requests)

    @property
    def problems(self) -> tuple[str, ...]:
        """Every failed check so far, as readable sentences."""
        with self._lock:
            return tuple(self._problems)

    @property
    def turns_played(self) -> int:
        """How many turns have been taken (answered or failed)."""
        with self._lock:
            return self._next_turn

    # -- ASGI ---------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        served = _Served(path=scope["path"])

        async def send_and_note(message: Message) -> None:
            if message["type"] == "http.response.start":
                served.status = message["status"]
            await send(message)

        try:
            await self._serve(scope, receive, send_and_note, served)
        finally:
            log(
                logger,
                logging.DEBUG,
                "request_served",
                f"{scope.get('method', '?')} {served.path} ({served.dialect}) -> "
                f"{served.status}, turn {served.turn}, fault {served.fault}"
                + ("" if served.completed else ", client gone before the end"),
                dialect=served.dialect,
                path=served.path,
                status=served.status,
                turn=served.turn,
                fault=served.fault,
                completed=served.completed,
            )

    async def _serve(self, scope: Scope, receive: Receive, send: Send, served: _Served) -> None:
        path: str = scope["path"]
        dialect = self._route(path)
        served.dialect = dialect
        if dialect is None:
            await _send_json(send, 404, error_body("openai_chat", 404, f"no route for {path}"))
            return
        if scope["method"] != "POST":
            await _send_error(send, dialect, 405, "use POST", as_status=400)
            return
        raw = await _read_body(receive)
        if raw is None:
            await _send_error(send, dialect, 413, "request too large")
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            body: Any = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = None
        turn, turn_number, problems = self._take_turn(
            dialect, path=path, query=query, headers=headers, body=body, raw=raw
        )
        served.turn = turn_number if turn is not None else None
        if problems:
            message = "simulator: " + " | ".join(problems)
            await _send_error(send, dialect, 400, message)
            return
        assert turn is not None  # no problems means a turn was found
        served.fault = _fault_name(turn.fault)
        served.completed = await self._answer(
            dialect, turn, turn_number, receive, send, encrypted=asks_encrypted(body)
        )

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    @staticmethod
    def _route(path: str) -> str | None:
        if path in _PATHS:
            return _PATHS[path]
        bedrock = _BEDROCK_PATH.match(path)
        if bedrock is not None:
            return _BEDROCK_OPERATIONS[bedrock["operation"]]
        return "gemini" if _GEMINI_PATH.match(path) else None

    def _take_turn(
        self,
        dialect: str,
        *,
        path: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: Any,
        raw: bytes,
    ) -> tuple[Turn | None, int, list[str]]:
        results = tuple(tool_results_in(dialect, body))
        with self._lock:
            turns = self._script.turns
            if self._restart == "loop" and turns and self._next_turn >= len(turns):
                self._next_turn = 0
            elif (
                self._restart == "conversation"
                and self._next_turn > 0
                and not self._retrying
                and opens_conversation(dialect, body)
            ):
                self._next_turn = 0
                self._issued = []  # a new conversation answers no earlier call
            turn_number = self._next_turn
            turn = turns[turn_number] if turn_number < len(turns) else None
            self._next_turn += 1
            self._requests.append(
                RecordedRequest(
                    dialect=dialect,
                    path=path,
                    query=query,
                    headers=headers,
                    body=body,
                    turn_number=turn_number if turn is not None else -1,
                    results=results,
                )
            )
            where = f"request {turn_number + 1} ({dialect})"
            problems = self._check(
                dialect, path=path, query=query, body=body, raw=raw, turn=turn, results=results
            )
            problems = [f"{where}: {p}" for p in problems]
            self._problems.extend(problems)
            if turn is not None and not problems:
                self._issue(dialect, turn, turn_number, asks_encrypted(body))
            self._retrying = turn is not None and isinstance(turn.fault, _FAILING_FAULTS)
            return turn, turn_number, problems

    def _issue(self, dialect: str, turn: Turn, turn_number: int, encrypted: bool) -> None:
        """Remember the calls this turn sends, so the next request can be checked."""
        if isinstance(turn.fault, _FAILING_FAULTS):
            # Nothing complete reaches the client: it will ask again with the same results.
            # (A stall's calls are issued once the whole stream went out: see _answer.)
            return
        self._record_issued(dialect, turn, turn_number, encrypted)

    def _record_issued(self, dialect: str, turn: Turn, turn_number: int, encrypted: bool) -> None:
        # The same list the encoder streams (one owner: simulator/reasoning.py).
        self._issued_reasoning = issued_blocks(
            dialect, turn, turn_number=turn_number, encrypted=encrypted
        )
        if dialect == "gemini":
            # The one signature rule the encoder streams (simulator/reasoning.py).
            signed = step_signature(self._script.model, turn, turn_number)
            if signed is not None:
                self._signed.add(signed)
        self._issued_dialect = dialect
        self._issued = []
        for i, call in enumerate(turn.calls):
            call_id = resolved_call_id(call, dialect=dialect, turn_number=turn_number, position=i)
            self._issued.append(_IssuedCall(call=call, call_id=call_id, position=i))
            if call_id is not None:
                self._all_ids.add(call_id)

    def _check(
        self,
        dialect: str,
        *,
        path: str,
        query: dict[str, list[str]],
        body: Any,
        raw: bytes,
        turn: Turn | None,
        results: tuple[ReceivedResult, ...],
    ) -> list[str]:
        problems: list[str] = []
        if turn is None:
            return [f"the script has only {len(self._script.turns)} turn(s); no turn is left"]
        if not isinstance(body, dict):
            return ["the body is not a JSON object"]
        if dialect == "gemini":
            if not path.endswith(":streamGenerateContent"):
                problems.append(f"{path} is not the streaming method (:streamGenerateContent)")
            if query.get("alt") != ["sse"]:
                problems.append("the query lacks alt=sse (Gemini would answer a JSON array)")
        elif dialect in _BEDROCK_CHECKS:
            problems += _BEDROCK_CHECKS[dialect](body)
        elif body.get("stream") is not True:
            problems.append('the body lacks "stream": true (the provider would not stream)')
        if turn.expect_text_in_request and turn.expect_text_in_request.encode() not in raw:
            problems.append(f"the request does not contain {turn.expect_text_in_request!r}")
        self._cross = self._issued_dialect not in (None, dialect)
        if self._script.check_results:
            problems += self._check_results(dialect, results)
            if self._issued and self._issued_dialect != dialect:
                problems += self._check_carried(dialect, body)
        problems += pairing_problems(dialect, body)
        problems += [p for result in results for p in result.problems]
        # What the real API refuses about reasoning, whatever the script checks.
        # (Blocks another dialect streamed are not this API's to check: only its own
        # rules about the request, such as Anthropic's thinking-first rule, apply.)
        own = self._issued_dialect == dialect
        problems += check_request(
            dialect,
            body,
            self._issued_reasoning if own else [],
            [c.call_id for c in self._issued] if own else [],
        )
        if dialect == "gemini":
            problems += gemini_3_problems(self._script.model, body, self._signed)
        problems += self._check_expectations(turn, results)
        return problems

    def _check_carried(self, dialect: str, body: dict[str, Any]) -> list[str]:
        """A turn another dialect's endpoint streamed, sent here (a provider fallback):
        the request's last assistant turn must carry its calls, names and arguments, in
        order (the ids are the carrier's to choose, and the pairing check holds them to
        their results)."""
        calls, _ = last_turn(dialect, body)
        sent = [(c.name, c.args) for c in calls]
        wanted = [(i.call.name, i.call.args) for i in self._issued]
        if sent != wanted:
            return [
                f"the {self._issued_dialect} turn carried over to {dialect} should hold the "
                f"calls {wanted}; it holds {sent}"
            ]
        return []

    def _match(self, issued: _IssuedCall, results: tuple[ReceivedResult, ...]) -> int | None:
        """Index in ``results`` of the result answering ``issued``, or ``None``."""
        if self._cross:
            # Carried over from another dialect: ids may be new (and Gemini's none), so
            # the k-th call is answered by the k-th of the last len(issued) results.
            n = len(results) - len(self._issued) + self._issued.index(issued)
            return n if n >= 0 else None
        if issued.call_id is not None:
            # The last one: earlier turns may reuse a scripted id.
            for n in range(len(results) - 1, -1, -1):
                if results[n].call_id == issued.call_id:
                    return n
            return None
        # Gemini without ids: the k-th call of a name is answered by the k-th response of
        # that name among the last len(issued) results.
        recent = list(range(max(0, len(results) - len(self._issued)), len(results)))
        same_name = [c for c in self._issued if c.call.name == issued.call.name]
        rank = same_name.index(issued)
        candidates = [n for n in recent if results[n].name == issued.call.name]
        return candidates[rank] if rank < len(candidates) else None

    def _check_results(self, dialect: str, results: tuple[ReceivedResult, ...]) -> list[str]:
        problems: list[str] = []
        positions: list[int] = []
        for issued in self._issued:
            n = self._match(issued, results)
            label = f"call {issued.position} ({issued.call.name}, id {issued.call_id!r})"
            if n is None:
                found = [r.call_id for r in results]
                problems.append(f"no tool result for {label}; result ids found: {found}")
                continue
            positions.append(n)
            if results[n].name is not None and results[n].name != issued.call.name:
                problems.append(f"the result for {label} names {results[n].name!r}")
        if positions != sorted(positions):
            problems.append("the tool results are not in call order")
        for result in results:
            if self._cross:
                break  # new ids are the carrier's; the pairing check holds them
            if result.call_id is not None and (
                not isinstance(result.call_id, str) or result.call_id not in self._all_ids
            ):
                problems.append(f"a tool result carries id {result.call_id!r}, which no call had")
        return problems

    def _check_expectations(self, turn: Turn, results: tuple[ReceivedResult, ...]) -> list[str]:
        problems: list[str] = []
        for expect in turn.expect_results:
            if expect.call_position >= len(self._issued):
                problems.append(f"no call {expect.call_position} in the previous turn to check")
                continue
            issued = self._issued[expect.call_position]
            n = self._match(issued, results)
            if n is None:
                continue  # already reported by the id check (or nothing to compare)
            result = results[n]
            if expect.contains and expect.contains not in result.content:
                problems.append(
                    f"the result for call {expect.call_position} should contain "
                    f"{expect.contains!r}; it is {result.content[:200]!r}"
                )
            if expect.media is not None and result.media != tuple(expect.media):
                problems.append(
                    f"the result for call {expect.call_position} should carry media "
                    f"{list(expect.media)}; it carries {list(result.media)}"
                )
            if (
                expect.is_error is not None
                and result.is_error is not None
                and result.is_error != expect.is_error
            ):
                problems.append(
                    f"the result for call {expect.call_position} has is_error={result.is_error}"
                )
        return problems

    # -- answering ----------------------------------------------------------------

    async def _answer(
        self,
        dialect: str,
        turn: Turn,
        turn_number: int,
        receive: Receive,
        send: Send,
        *,
        encrypted: bool,
    ) -> bool:
        """Answer with ``turn``; return whether the whole answer went out."""
        fault = turn.fault
        model = self._script.model
        if isinstance(fault, HTTPError):
            extra: list[tuple[bytes, bytes]] = []
            if fault.retry_after is not None:
                extra.append((b"retry-after", fault.retry_after.encode()))
            if fault.retry_after_ms is not None:
                extra.append((b"retry-after-ms", str(fault.retry_after_ms).encode()))
            await _send_error(send, dialect, fault.status, fault.message, extra)
            return True
        if isinstance(fault, CutInArguments):
            chunks = encode_cut_in_arguments(dialect, turn, model=model, turn_number=turn_number)
        elif isinstance(fault, Cut):
            chunks = encode_cut(dialect, turn, fault, model=model, turn_number=turn_number)
        elif isinstance(fault, CorruptedCRC):
            chunks = encode_corrupted(dialect, turn, fault, model=model, turn_number=turn_number)
        elif isinstance(fault, ErrorEvent):
            chunks = encode_error_event(dialect, turn, fault, model=model, turn_number=turn_number)
        elif isinstance(fault, RawBody):
            chunks = list(fault.chunks)
        else:
            chunks = encode_turn(
                dialect, turn, model=model, turn_number=turn_number, encrypted_reasoning=encrypted
            )
        completed = await _stream(send, receive, chunks, fault, media_type(dialect))
        if isinstance(fault, Stall) and completed:
            # A client that waited out the stall got the calls; one that timed out and
            # hung up did not, and will ask again with the previous turn's results.
            with self._lock:
                self._record_issued(dialect, turn, turn_number, encrypted)
                self._retrying = False  # the client has its answer
        return completed


@dataclass(slots=True)
class _Served:
    """What the request log says of one request, filled in as it is answered."""

    path: str
    dialect: str | None = None
    status: int | None = None
    turn: int | None = None
    fault: str | None = None
    completed: bool = True


def _fault_name(fault: object) -> str | None:
    if fault is None:
        return None
    if isinstance(fault, HTTPError):
        return f"HTTPError({fault.status})"
    return type(fault).__name__


# Where each dialect's request lists the conversation, and the roles that answer in it.
_TURNS = {
    "openai_chat": ("messages", frozenset({"assistant", "tool"})),
    "anthropic": ("messages", frozenset({"assistant"})),
    "gemini": ("contents", frozenset({"model"})),
    "bedrock_converse": ("messages", frozenset({"assistant"})),
    "bedrock_anthropic": ("messages", frozenset({"assistant"})),
}


def opens_conversation(dialect: str, body: Any) -> bool:
    """Whether a request body of ``dialect`` starts a conversation: it carries no
    assistant turn and no tool result (the first request a new client sends)."""
    if not isinstance(body, dict):
        return False
    if dialect == "openai_responses":
        if body.get("previous_response_id"):
            return False
        items = body.get("input")
        return not isinstance(items, list) or not any(
            isinstance(item, dict)
            and (
                item.get("role") == "assistant"
                or item.get("type") in ("function_call", "function_call_output")
            )
            for item in items
        )
    key, answered = _TURNS[dialect]
    entries = body.get(key)
    return not isinstance(entries, list) or not any(
        isinstance(entry, dict) and entry.get("role") in answered for entry in entries
    )


# --------------------------------------------------------------------------------------
# What Bedrock refuses in a request body, in its own words.


def _converse_problems(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages: a ConverseStream request needs a non-empty list of messages"]
    tools = body.get("toolConfig")
    contents = [m.get("content") for m in messages if isinstance(m, dict)]
    uses_tools = any(
        isinstance(block, dict) and ("toolUse" in block or "toolResult" in block)
        for content in contents
        if isinstance(content, list)
        for block in content
    )
    if uses_tools and not isinstance(tools, dict):
        problems.append(
            "The toolConfig field must be defined when using toolUse and toolResult content blocks."
        )
    declared = tools.get("tools") if isinstance(tools, dict) else None
    if isinstance(tools, dict) and not (isinstance(declared, list) and declared):
        problems.append(
            "Value at 'toolConfig.tools' failed to satisfy constraint: Member must have "
            "length greater than or equal to 1"
        )
    for n, tool in enumerate(declared if isinstance(declared, list) else ()):
        spec = tool.get("toolSpec") if isinstance(tool, dict) else None
        schema = spec.get("inputSchema") if isinstance(spec, dict) else None
        name = spec.get("name") if isinstance(spec, dict) else None
        if not (isinstance(name, str) and isinstance(schema, dict)):
            problems.append(
                f"toolConfig.tools.{n}: expected a toolSpec with a name and inputSchema"
            )
        elif not _TOOL_NAME.fullmatch(name):
            problems.append(
                f"Value at 'toolConfig.tools.{n + 1}.member.toolSpec.name' failed to satisfy "
                "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+ "
                "and have length less than or equal to 64"
            )
        elif not isinstance(schema.get("json"), dict):
            problems.append(f"toolConfig.tools.{n}.toolSpec.inputSchema: expected a json schema")
        elif isinstance(spec, dict) and spec.get("description") == "":
            # An empty description is refused, not ignored: leave the key out instead.
            problems.append(
                f"Value at 'toolConfig.tools.{n + 1}.member.toolSpec.description' failed to "
                "satisfy constraint: Member must have length greater than or equal to 1"
            )
    return problems


# ToolSpecification.name in the Bedrock Runtime API reference ("Length Constraints: Minimum
# length of 1. Maximum length of 64. Pattern: [a-zA-Z0-9_-]+").
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def _invoke_anthropic_problems(body: dict[str, Any]) -> list[str]:
    # The model's body is checked against Anthropic's schema on Bedrock: its version, no
    # key Bedrock's variant lacks (the model is in the path, the stream in the operation).
    problems: list[str] = []
    for key in ("model", "stream"):
        if key in body:
            problems.append(
                f"Malformed input request: #: extraneous key [{key}] is not permitted, "
                "please reformat your input and try again."
            )
    for key in ("anthropic_version", "max_tokens", "messages"):
        if key not in body:
            problems.append(f"Malformed input request: #: required key [{key}] not found")
    version = body.get("anthropic_version")
    if version is not None and version != "bedrock-2023-05-31":
        problems.append(f"anthropic_version: expected bedrock-2023-05-31, got {version!r}")
    return problems


_BEDROCK_CHECKS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "bedrock_converse": _converse_problems,
    "bedrock_anthropic": _invoke_anthropic_problems,
}


async def _read_body(receive: Receive) -> bytes | None:
    pieces: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(pieces)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_REQUEST_BYTES:
            return None
        pieces.append(chunk)
        if not message.get("more_body", False):
            return b"".join(pieces)


async def _send_json(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", b"application/json"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _send_error(
    send: Send,
    dialect: str,
    status: int,
    message: str,
    extra: list[tuple[bytes, bytes]] | None = None,
    *,
    as_status: int | None = None,
) -> None:
    """An HTTP error in ``dialect``'s shape: its body and its headers (Bedrock's type),
    both as for ``as_status`` when given (a 405 is typed as a bad request)."""
    typed = status if as_status is None else as_status
    headers = [*error_headers(dialect, typed), *(extra or [])]
    await _send_json(send, status, error_body(dialect, typed, message), headers)


async def _stream(
    send: Send, receive: Receive, chunks: list[bytes], fault: object, content_type: str
) -> bool:
    """Send ``chunks`` as an event stream of ``content_type``; return whether all of it
    went out (False when the client hung up first)."""
    headers = [(b"content-type", content_type.encode()), (b"cache-control", b"no-cache")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    completed = False
    async with anyio.create_task_group() as group:

        async def watch_disconnect() -> None:
            # A client that hangs up (a timeout, an early break) ends the answer at once,
            # instead of the server stalling on a closed socket until shutdown.
            while (await receive())["type"] != "http.disconnect":
                pass
            group.cancel_scope.cancel()

        group.start_soon(watch_disconnect)
        for n, chunk in enumerate(chunks):
            if isinstance(fault, Stall) and n == fault.after_events:
                await anyio.sleep(fault.seconds)
            if isinstance(fault, OneByteAtATime):
                for i in range(len(chunk)):
                    await send(
                        {"type": "http.response.body", "body": chunk[i : i + 1], "more_body": True}
                    )
                    # Yield to the loop so each byte leaves as its own write.
                    await anyio.lowlevel.checkpoint()
            else:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        completed = True
        group.cancel_scope.cancel()
    return completed


__all__ = [
    "MAX_REQUEST_BYTES",
    "ReceivedResult",
    "Restart",
    "RecordedRequest",
    "SimulatorApp",
    "opens_conversation",
    "tool_results_in",
]
