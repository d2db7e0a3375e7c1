"""Thin provider clients over httpx2 (or a caller's httpx client): the endpoint, the auth
headers, the request body, and the streamed answer through the edge.

One class per dialect; each takes its API key from the provider's usual environment
variable unless given one, and a base URL (so any OpenAI-compatible server, or the
simulator, can stand in). Request bodies come from ``sse_toolcalls.messages``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

import anyio

# httpx2, the HTTP stack the openai, anthropic and mcp SDKs depend on (its API is
# httpx's), so a user of any of them has no second stack to install; a caller's own
# httpx.AsyncClient works as well (README, "Which HTTP client").
import httpx2

from .._checks import check_quantity
from .._faces import publish
from .._jsonsafe import dumps_safe
from .._secrets import SecretSet, credentials, remember
from ..calls import (
    Dialect,
    StreamEvent,
    StreamFinished,
    ToolCall,
    ToolCallCompleted,
    ToolCallStarted,
    ToolSpec,
)
from ..conversation import Conversation
from ..dialects.naming import ToolNameMap
from ..edge.responses import TIMEOUT_CODE, aiter_events, aiter_tool_calls
from ..edge.transport import classify
from ..errors import ProviderError, StreamTimeoutError, UnknownDialectError, UsageError
from ..messages import build_request

if TYPE_CHECKING:
    import httpx

AsyncHTTPClient: TypeAlias = "httpx2.AsyncClient | httpx.AsyncClient"
"""An async client of either stack: httpx2's (the default) or httpx's."""

DEFAULT_TIMEOUT = httpx2.Timeout(120.0, connect=10.0)
"""Connect within 10 s; 120 s for each read, write and pool wait: reasoning models can be
silent for a minute before the first token, and a stalled stream must still end."""

CONNECTION_CODE = "connection_error"
"""The ``ProviderError.code`` of a request that failed before any answer arrived."""


async def _close(stream: AsyncIterator[Any], response: Any) -> None:
    # The edge closes the response once it has started reading; a consumer that stops
    # before the first item never started it, so the response is closed here too.
    with anyio.CancelScope(shield=True):
        closer = getattr(stream, "aclose", None)
        if closer is not None:
            await closer()
        await response.aclose()


def _name_map(dialect: str, tools: Sequence[ToolSpec]) -> ToolNameMap | None:
    """The map between registry names and the legal names the request declared, or
    ``None`` when every name is legal as it is (the common case: nothing to translate)."""
    names = ToolNameMap(dialect, [tool.name for tool in tools])
    return None if all(wire == name for name, wire in names.items()) else names


def _event_from_wire(event: StreamEvent, names: ToolNameMap) -> StreamEvent:
    """A stream event with its calls under their registry names, so the call reaches the
    tool the registry knows (``build_request`` declared them under legal wire names)."""
    if isinstance(event, ToolCallCompleted):
        return ToolCallCompleted(call=names.call_from_wire(event.call))
    if isinstance(event, ToolCallStarted):
        return dataclasses.replace(event, name=names.from_wire(event.name))
    if isinstance(event, StreamFinished):
        return dataclasses.replace(
            event, calls=tuple(names.call_from_wire(call) for call in event.calls)
        )
    return event


class ProviderClient:
    """Base of the four clients: a model, a key, a base URL, an httpx client."""

    dialect: ClassVar[Dialect]
    """The wire format this client speaks."""
    default_base_url: ClassVar[str]
    """Where the provider's public API lives."""
    key_variables: ClassVar[tuple[str, ...]]
    """Environment variables searched, in order, for the API key."""
    base_url_variable: ClassVar[str | None] = None
    """Environment variable that overrides the default base URL, if the SDKs honour one."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        http_client: AsyncHTTPClient | None = None,
        timeout: httpx2.Timeout | float = DEFAULT_TIMEOUT,
        idle_timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Args:
            model: the model name sent with each request.
            api_key: the key; ``None`` reads the environment; ``""`` sends no key (local
                servers without auth).
            base_url: the API root; ``None`` reads the environment or uses the default.
            http_client: an httpx2 or httpx ``AsyncClient`` to use (it stays the
                caller's to close); ``None`` makes an httpx2 one this object owns.
            timeout: timeouts for a client this object makes.
            idle_timeout: seconds without a chunk after which a stream is abandoned.
            headers: extra headers for every request.

        Raises:
            UsageError: no API key given or found in the environment, or an
                ``idle_timeout`` or a number ``timeout`` that is not finite positive seconds.
        """
        if idle_timeout is not None:
            check_quantity("idle_timeout", idle_timeout, positive=True)
        if isinstance(timeout, int | float):  # a Timeout object is httpx's to check
            check_quantity("timeout", timeout, positive=True)
        if api_key is None:
            api_key = next((os.environ[v] for v in self.key_variables if os.environ.get(v)), None)
            if api_key is None:
                names = " or ".join(self.key_variables)
                raise UsageError(f"no API key: pass api_key= or set {names}")
        if base_url is None and self.base_url_variable is not None:
            base_url = os.environ.get(self.base_url_variable) or None
        self.model = model
        """The model name."""
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        """The API root requests go to."""
        self.idle_timeout = idle_timeout
        """Seconds without a chunk after which a stream is abandoned (``None``: never)."""
        self._api_key = api_key
        self._extra_headers = dict(headers or {})
        # The credentials this client sends, in every spelling: a provider's error that
        # echoes one is redacted before it leaves (_scrub), and the library's log records
        # are redacted against them too (remember).
        self._secrets = SecretSet(credentials(self.headers().items(), self._url_or_empty()))
        if api_key:
            remember(api_key)
        self._owns_client = http_client is None
        # Either stack's client: both have build_request/send/aclose with httpx's API.
        self._http: Any = http_client or httpx2.AsyncClient(timeout=timeout)

    # -- what each dialect defines ------------------------------------------------

    def url(self) -> str:
        """The streaming endpoint."""
        raise NotImplementedError

    def auth_headers(self, api_key: str) -> dict[str, str]:
        """The headers carrying ``api_key``."""
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------

    def _url_or_empty(self) -> str:
        """The endpoint, or ``""`` where a subclass cannot name it yet."""
        try:
            return self.url()
        except NotImplementedError:
            return ""

    def _scrub(self, error: ProviderError) -> None:
        """``error`` with this client's credentials redacted from its message, body and
        args, in place: an application that logs it must not log the key."""
        secrets = self._secrets
        if secrets:
            error.message = secrets.redact(error.message)
            error.body = secrets.redact_value(error.body)
            error.args = tuple(secrets.redact_value(a) for a in error.args)

    def headers(self) -> dict[str, str]:
        """Every header of a request: auth (when a key is set), JSON, the extras."""
        out = {"content-type": "application/json", "accept": "text/event-stream"}
        if self._api_key:
            out.update(self.auth_headers(self._api_key))
        out.update(self._extra_headers)
        return out

    def body(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> dict[str, Any]:
        """The JSON request body for ``conversation`` with ``tools`` (streaming on).

        Raises:
            UsageError: the conversation or options cannot be encoded for this dialect.
        """
        return build_request(
            self.dialect, conversation, tools, model=self.model, stream=True, **options
        )

    async def _open(self, body: dict[str, Any]) -> Any:
        # Our own encoder, not httpx's json=: the stdlib's refuses NaN and lone surrogates,
        # which an echoed argument object can hold, and this request is often the one
        # that carries a tool's result after the tool ran.
        request = self._http.build_request(
            "POST", self.url(), content=dumps_safe(body), headers=self.headers()
        )
        try:
            return await self._http.send(request, stream=True)
        except Exception as exc:
            # Either stack's exceptions, recognised by their class hierarchy.
            kind = classify(exc)
            if kind is None:
                raise
            if kind == "timeout":
                raise StreamTimeoutError(
                    f"{self.dialect}: the request timed out: {exc!r}",
                    provider=self.dialect,
                    code=TIMEOUT_CODE,
                ) from exc
            raise ProviderError(
                f"{self.dialect}: the request failed: {exc!r}",
                provider=self.dialect,
                code=CONNECTION_CODE,
                retryable=True,
            ) from exc

    async def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        """Send the conversation; yield the rich stream events of the answer.

        Raises:
            ProviderError: the request failed, an HTTP error status, an error in the
                stream, or a timeout; plus everything :func:`~.edge.aiter_events` raises.
        """
        try:
            response = await self._open(self.body(conversation, tools, **options))
        except ProviderError as exc:
            self._scrub(exc)
            raise
        events = aiter_events(response, self.dialect, idle_timeout=self.idle_timeout)
        names = _name_map(self.dialect, tools)
        try:
            async for event in events:
                yield _event_from_wire(event, names) if names is not None else event
        except ProviderError as exc:
            self._scrub(exc)
            raise
        finally:
            await _close(events, response)

    async def stream_tool_calls(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[ToolCall]:
        """Send the conversation; yield each complete call of the answer. Errors as in
        :meth:`stream_events`."""
        try:
            response = await self._open(self.body(conversation, tools, **options))
        except ProviderError as exc:
            self._scrub(exc)
            raise
        calls = aiter_tool_calls(response, self.dialect, idle_timeout=self.idle_timeout)
        names = _name_map(self.dialect, tools)
        try:
            async for call in calls:
                yield names.call_from_wire(call) if names is not None else call
        except ProviderError as exc:
            self._scrub(exc)
            raise
        finally:
            await _close(calls, response)

    async def aclose(self) -> None:
        """Close the HTTP client, if this object made it."""
        if self._owns_client:
            await self._http.aclose()

    def __repr__(self) -> str:
        # Never the key: only whether there is one.
        key = "a key" if self._api_key else "no key"
        return f"<{type(self).__name__} {self.model!r} at {self.base_url}, {key}>"

    async def __aenter__(self) -> ProviderClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class OpenAIChatClient(ProviderClient):
    """OpenAI Chat Completions (``POST {base}/chat/completions``), and compatible servers."""

    dialect: ClassVar[Dialect] = "openai_chat"
    default_base_url = "https://api.openai.com/v1"
    key_variables = ("OPENAI_API_KEY",)
    base_url_variable = "OPENAI_BASE_URL"

    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"}


class OpenAIResponsesClient(OpenAIChatClient):
    """OpenAI Responses (``POST {base}/responses``)."""

    dialect: ClassVar[Dialect] = "openai_responses"

    def url(self) -> str:
        return f"{self.base_url}/responses"


class AnthropicClient(ProviderClient):
    """Anthropic Messages (``POST {base}/v1/messages``)."""

    dialect: ClassVar[Dialect] = "anthropic"
    default_base_url = "https://api.anthropic.com"
    key_variables = ("ANTHROPIC_API_KEY",)
    base_url_variable = "ANTHROPIC_BASE_URL"
    api_version = "2023-06-01"
    """The ``anthropic-version`` header: the Messages API's only version."""

    def url(self) -> str:
        return f"{self.base_url}/v1/messages"

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"x-api-key": api_key, "anthropic-version": self.api_version}


class GeminiClient(ProviderClient):
    """Gemini (``POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse``)."""

    dialect: ClassVar[Dialect] = "gemini"
    default_base_url = "https://generativelanguage.googleapis.com"
    key_variables = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    api_version = "v1beta"
    """The API version in the path; tools and ``functionCall.id`` need ``v1beta``."""

    def url(self) -> str:
        return (
            f"{self.base_url}/{self.api_version}/models/{self.model}:streamGenerateContent?alt=sse"
        )

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"x-goog-api-key": api_key}


CLIENTS: dict[str, type[ProviderClient]] = {
    "openai_chat": OpenAIChatClient,
    "openai_responses": OpenAIResponsesClient,
    "anthropic": AnthropicClient,
    "gemini": GeminiClient,
}
"""The client class of each dialect."""


def client_for(dialect: Dialect, **kwargs: Any) -> ProviderClient:
    """A client for ``dialect``; ``kwargs`` as in :class:`ProviderClient`.

    Raises:
        UnknownDialectError: an unknown dialect.
        UsageError: no API key.
    """
    try:
        cls = CLIENTS[dialect]
    except KeyError:
        raise UnknownDialectError(dialect, expected=tuple(CLIENTS)) from None
    return cls(**kwargs)


__all__ = [
    "CLIENTS",
    "CONNECTION_CODE",
    "DEFAULT_TIMEOUT",
    "AnthropicClient",
    "GeminiClient",
    "OpenAIChatClient",
    "OpenAIResponsesClient",
    "ProviderClient",
    "client_for",
]

# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
