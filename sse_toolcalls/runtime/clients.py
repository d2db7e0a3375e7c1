"""Thin provider clients over httpx2 (or a caller's httpx client): the endpoint, the auth
headers, the request body, and the streamed answer through the edge.

One class per dialect; each takes its API key from the provider's usual environment
variable unless given one, and a base URL (so any OpenAI-compatible server, or the
simulator, can stand in). Request bodies come from ``sse_toolcalls.messages``.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
import os
import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias
from urllib.parse import quote, urlsplit

import anyio

# httpx2, the HTTP stack the openai, anthropic and mcp SDKs depend on (its API is
# httpx's), so a user of any of them has no second stack to install; a caller's own
# httpx.AsyncClient works as well (README, "Which HTTP client").
import httpx2

from .._checks import check_quantity
from .._faces import publish
from .._jsonsafe import dumps_safe
from .._secrets import SecretSet, credentials, known, remember
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
from ..dialects import spec_for
from ..dialects.naming import ToolNameMap
from ..edge.responses import TIMEOUT_CODE, aiter_events, aiter_tool_calls
from ..edge.transport import classify
from ..errors import ProviderError, StreamTimeoutError, UnknownDialectError, UsageError
from ..framing import framing_for
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


def _media_type(dialect: Dialect) -> str:
    """The ``Content-Type`` of a streamed answer in the dialect's framing."""
    return framing_for(spec_for(dialect).framing).media_type


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
    """Base of the clients: a model, a key, a base URL, an httpx client."""

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

    def request_headers(self, url: str, content: bytes) -> dict[str, str]:
        """The headers of the request that sends ``content`` to ``url``: :meth:`headers`,
        and a signature over them where the provider signs each request (Bedrock).

        Raises:
            ProviderError: the request could not be signed.
        """
        return self.headers()

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
        url = self.url()
        content = dumps_safe(body)
        request = self._http.build_request(
            "POST", url, content=content, headers=self.request_headers(url, content)
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


_REGION = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*", re.ASCII)
"""An AWS region's name (``us-east-1``, ``us-gov-west-1``): it becomes part of a host
name, so nothing else is accepted (a region ``"evil.example/x"`` would send the request
and its credentials elsewhere)."""

MAX_REGION_CHARS = 32
"""Longest region name accepted, in characters: the longest AWS has is 14
(``ap-southeast-5``, ``us-isob-east-1``); a DNS label may not pass 63."""

SIGNING_CODE = "signing_failed"
"""The ``ProviderError.code`` of a Bedrock request that could not be signed (botocore's
credential chain failed to refresh, or raised)."""

_MODEL_SAFE = "-._~"
"""What stays unencoded of a model id in the URL path (botocore's ``percent_encode``):
an ARN's ``:`` and ``/`` are encoded, so the id is one path segment, as AWS reads it."""


class _RedactSecrets(logging.Filter):
    """Redacts the secrets the library knows (:func:`~sse_toolcalls._secrets.remember`)
    from a record of another library's logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = known()
        if secrets:
            message = record.getMessage()
            redacted = secrets.redact(message)
            if redacted != message:
                record.msg, record.args = redacted, ()
        return True


def _redact_botocore_signing_logs() -> None:
    """botocore's signer logs the canonical request at DEBUG, the session token's header
    in it: an application that turns DEBUG on for every logger would log the token our
    client made it sign with. Installed once; a filter runs only for records that pass
    the level, so it costs nothing with DEBUG off."""
    logger = logging.getLogger("botocore.auth")
    if not any(isinstance(f, _RedactSecrets) for f in logger.filters):
        logger.addFilter(_RedactSecrets())


class _SigV4:
    """Signs each request with AWS Signature Version 4, through botocore (the optional
    extra ``sse_toolcalls[bedrock]``), imported here only: a client with a bearer key
    never loads it."""

    def __init__(
        self,
        region: str,
        credentials: Any,
        access_key_id: str | None,
        secret_access_key: str | None,
        session_token: str | None,
    ) -> None:
        """Raises:
        UsageError: botocore is not installed, half a key pair, or no credentials.
        """
        try:
            from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
            from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
            from botocore.credentials import Credentials  # type: ignore[import-untyped]
            from botocore.session import Session  # type: ignore[import-untyped]
        except ImportError:
            raise UsageError(
                "AWS Signature V4 needs botocore: pip install 'sse_toolcalls[bedrock]' "
                "(or pass a Bedrock API key: api_key= or AWS_BEARER_TOKEN_BEDROCK)"
            ) from None
        self._auth = SigV4Auth
        self._request = AWSRequest
        self.region = region
        _redact_botocore_signing_logs()
        for name, key in (
            ("aws_access_key_id", access_key_id),
            ("aws_secret_access_key", secret_access_key),
            ("aws_session_token", session_token),
        ):
            if key is not None and (not isinstance(key, str) or not key.strip()):
                raise UsageError(f"{name} must be a non-empty str, got {type(key).__name__}")
        if (access_key_id is None) != (secret_access_key is None):
            raise UsageError("pass both aws_access_key_id= and aws_secret_access_key=")
        if session_token is not None and access_key_id is None:
            raise UsageError("aws_session_token= goes with aws_access_key_id= and its secret")
        if access_key_id is not None:
            if credentials is not None:
                raise UsageError("pass credentials= or the aws_* keys, not both")
            credentials = Credentials(access_key_id, secret_access_key, session_token)
        elif credentials is None:
            # The chain boto3 uses: the environment, the shared files, a profile, SSO,
            # a container's or an instance's role.
            try:
                credentials = Session().get_credentials()
            except Exception as exc:
                # botocore's own (a profile that is not there, a config file it cannot
                # parse): only our exceptions leave a client's constructor.
                raise UsageError(f"botocore's credential chain failed: {exc}") from exc
            if credentials is None:
                raise UsageError(
                    "no AWS credentials: pass api_key= (a Bedrock API key), set "
                    "AWS_BEARER_TOKEN_BEDROCK, pass aws_access_key_id= and "
                    "aws_secret_access_key=, or configure botocore's credential chain "
                    "(AWS_ACCESS_KEY_ID, a profile...)"
                )
        if not callable(getattr(credentials, "get_frozen_credentials", None)):
            raise UsageError(
                "credentials= must be botocore credentials (with get_frozen_credentials()), "
                f"got {type(credentials).__name__}"
            )
        self.credentials = credentials

    def secrets(self) -> tuple[str, ...]:
        """The credentials' secret key, session token and key id, as they are now."""
        frozen = self.credentials.get_frozen_credentials()
        return tuple(s for s in (frozen.secret_key, frozen.token, frozen.access_key) if s)

    def sign(
        self, url: str, content: bytes, headers: dict[str, str]
    ) -> tuple[dict[str, str], tuple[str, ...]]:
        """``headers`` with the signature's (``Authorization``, ``X-Amz-Date``,
        ``X-Amz-Security-Token``) for a POST of ``content`` to ``url``, and the secrets
        the signature used (to redact from now on)."""
        # Frozen: refreshable credentials (an assumed role, SSO) may rotate between
        # reading the key and the token otherwise.
        frozen = self.credentials.get_frozen_credentials()
        request = self._request(method="POST", url=url, data=content, headers=headers)
        # The service name AWS signs Bedrock's runtime under is "bedrock" (the service
        # model's signingName), not the endpoint's "bedrock-runtime".
        self._auth(frozen, "bedrock", self.region).add_auth(request)
        secrets = tuple(s for s in (frozen.secret_key, frozen.token, frozen.access_key) if s)
        return dict(request.headers.items()), secrets


def _private_transport(base_url: str) -> bool:
    """Whether requests to ``base_url`` go over HTTPS, or stay on this machine."""
    parts = urlsplit(base_url)
    if parts.scheme.lower() == "https":
        return True
    host = parts.hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BedrockClient(ProviderClient):
    """Amazon Bedrock ConverseStream
    (``POST https://bedrock-runtime.{region}.amazonaws.com/model/{modelId}/converse-stream``).

    Auth, in this order: a Bedrock API key as a bearer token (``api_key=``, else
    ``AWS_BEARER_TOKEN_BEDROCK``); else AWS Signature V4 through botocore (the extra
    ``sse_toolcalls[bedrock]``), with the keys given (``aws_access_key_id=``...,
    ``credentials=``) or botocore's own credential chain. ``api_key=""`` sends no auth
    (a local server). ``model`` is the model id, an inference profile id or an ARN.
    """

    dialect: ClassVar[Dialect] = "bedrock_converse"
    default_base_url = ""  # per region: see __init__
    key_variables = ("AWS_BEARER_TOKEN_BEDROCK",)
    # The endpoint override boto3 honours for this service.
    base_url_variable = "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"
    operation: ClassVar[str] = "converse-stream"
    """The last piece of the endpoint's path."""

    def __init__(
        self,
        *,
        model: str,
        region: str | None = None,
        api_key: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        credentials: Any = None,
        base_url: str | None = None,
        http_client: AsyncHTTPClient | None = None,
        timeout: httpx2.Timeout | float = DEFAULT_TIMEOUT,
        idle_timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Args:
            model: the model id (``anthropic.claude-3-5-sonnet-20240620-v1:0``), an
                inference profile id or ARN; it is percent-encoded into the path.
            region: the AWS region; ``None`` reads ``AWS_REGION``, then
                ``AWS_DEFAULT_REGION``. Needed for the default endpoint and for signing.
            api_key: a Bedrock API key, sent as ``Authorization: Bearer``; ``None``
                reads ``AWS_BEARER_TOKEN_BEDROCK``, and without one the request is
                signed (SigV4); ``""`` sends no auth at all.
            aws_access_key_id, aws_secret_access_key, aws_session_token: keys to sign
                with, instead of botocore's credential chain.
            credentials: botocore credentials to sign with (``session.get_credentials()``:
                refreshable ones are refreshed as botocore does).
            base_url: the API root; ``None`` reads ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``,
                then ``AWS_ENDPOINT_URL``, else
                ``https://bedrock-runtime.{region}.amazonaws.com``. With an API key,
                HTTPS or this machine only (``http://127.0.0.1``...), as botocore.
            http_client, timeout, idle_timeout, headers: as in :class:`ProviderClient`.

        Raises:
            UsageError: no region where one is needed, a region that is not a region's
                name, an empty model id or ``.``/``..``, no credentials of any kind,
                botocore missing for signing, keys given beside an API key, an API key
                for plain HTTP to another machine.
        """
        if not isinstance(model, str) or model.strip(".") == "":
            # "." and ".." would be read as path segments and dropped or climbed.
            raise UsageError(f"model must be a Bedrock model id, got {model!r}")
        if region is None:
            region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None
        if region is not None and (
            not isinstance(region, str)
            or len(region) > MAX_REGION_CHARS
            or not _REGION.fullmatch(region)
        ):
            raise UsageError(f"region must be an AWS region's name (us-east-1), got {region!r}")
        self.region = region
        """The AWS region (``None`` when neither the endpoint nor signing needs one)."""
        signing = any(
            given is not None
            for given in (aws_access_key_id, aws_secret_access_key, aws_session_token, credentials)
        )
        if api_key is not None and signing:
            raise UsageError("pass a Bedrock API key or AWS credentials, not both")
        if api_key is None and not signing:
            api_key = os.environ.get("AWS_BEARER_TOKEN_BEDROCK") or None
        self._signer: _SigV4 | None = None
        if api_key is None:
            if region is None:
                raise UsageError(
                    "signing Bedrock requests needs a region: pass region= or set AWS_REGION"
                )
            self._signer = _SigV4(
                region, credentials, aws_access_key_id, aws_secret_access_key, aws_session_token
            )
        if base_url is None:
            # boto3's order: the service's own variable, then the one for every service.
            base_url = (
                os.environ.get(self.base_url_variable or "")
                or os.environ.get("AWS_ENDPOINT_URL")
                or None
            )
        if base_url is None:
            if region is None:
                raise UsageError(
                    "Bedrock's endpoint is per region: pass region= (or set AWS_REGION), "
                    "or base_url="
                )
            base_url = f"https://bedrock-runtime.{region}.amazonaws.com"
        if api_key and not _private_transport(base_url):
            # As botocore refuses: a bearer key is the whole credential, readable by
            # anyone on the path of a plain HTTP request.
            raise UsageError(
                f"a Bedrock API key is sent over HTTPS only (or to this machine), not to "
                f"{base_url!r}"
            )
        super().__init__(
            model=model,
            api_key=api_key or "",
            base_url=base_url,
            http_client=http_client,
            timeout=timeout,
            idle_timeout=idle_timeout,
            headers=headers,
        )
        if self._signer is not None:
            # Known before the first request: an error raised before any was signed
            # (a refused connection) is redacted too. Credentials that cannot be read
            # now (a refresh that failed) are read again to sign, where a failure is
            # the request's ProviderError.
            try:
                secrets = self._signer.secrets()
            except Exception:
                secrets = ()
            self._remember(secrets)

    def _remember(self, secrets: Iterable[str]) -> None:
        for secret in secrets:
            self._secrets.add(secret)
            remember(secret)

    def url(self) -> str:
        model = quote(self.model, safe=_MODEL_SAFE)
        return f"{self.base_url}/model/{model}/{self.operation}"

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"}

    def headers(self) -> dict[str, str]:
        """Every header of a request but the signature: auth (a bearer key), JSON, the
        event stream accepted, the extras."""
        out = {"content-type": "application/json", "accept": _media_type(self.dialect)}
        if self._api_key:
            out.update(self.auth_headers(self._api_key))
        out.update(self._extra_headers)
        return out

    def request_headers(self, url: str, content: bytes) -> dict[str, str]:
        headers = self.headers()
        signer = self._signer
        if signer is None:
            return headers
        try:
            signed, secrets = signer.sign(url, content, headers)
        except Exception as exc:
            # botocore's own (a refresh of temporary credentials that failed): only our
            # exceptions leave a client.
            raise ProviderError(
                f"{self.dialect}: the request could not be signed: {exc!r}",
                provider=self.dialect,
                code=SIGNING_CODE,
                retryable=False,
            ) from exc
        self._remember(secrets)
        return signed

    def __repr__(self) -> str:
        # Never a key: only which kind of auth.
        auth = "SigV4" if self._signer else "a key" if self._api_key else "no key"
        return f"<{type(self).__name__} {self.model!r} at {self.base_url}, {auth}>"


class BedrockAnthropicClient(BedrockClient):
    """Anthropic models on Amazon Bedrock through InvokeModelWithResponseStream
    (``POST .../model/{modelId}/invoke-with-response-stream``), the Anthropic Messages
    body Bedrock expects. Auth and arguments as in :class:`BedrockClient`."""

    dialect: ClassVar[Dialect] = "bedrock_anthropic"
    operation: ClassVar[str] = "invoke-with-response-stream"


CLIENTS: dict[str, type[ProviderClient]] = {
    "openai_chat": OpenAIChatClient,
    "openai_responses": OpenAIResponsesClient,
    "anthropic": AnthropicClient,
    "gemini": GeminiClient,
    "bedrock_converse": BedrockClient,
    "bedrock_anthropic": BedrockAnthropicClient,
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
    "MAX_REGION_CHARS",
    "SIGNING_CODE",
    "AnthropicClient",
    "BedrockAnthropicClient",
    "BedrockClient",
    "GeminiClient",
    "OpenAIChatClient",
    "OpenAIResponsesClient",
    "ProviderClient",
    "client_for",
]

# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
