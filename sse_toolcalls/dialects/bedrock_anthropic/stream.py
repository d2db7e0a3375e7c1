"""Anthropic models through Amazon Bedrock's ``InvokeModelWithResponseStream``.

The body is AWS's event stream; each ``chunk`` event's payload is ``{"bytes": "<base64>"}``
(with Bedrock's ``"p"`` padding beside it), the bytes one event of Anthropic's own
Messages stream as JSON (``message_start`` ... ``message_stop``, whose last one adds
``amazon-bedrock-invocationMetrics``). So this is the Anthropic reassembler
(``dialects.anthropic.stream``) behind one unwrapping step; its calls name this
dialect. An ``exception`` message (``throttlingException``, ``modelStreamErrorException``
...) is the provider's error, as in ConverseStream (``dialects._aws``).
"""

from __future__ import annotations

import binascii
from typing import Any, ClassVar, cast

from ... import _json
from ...calls import Dialect
from ...errors import MalformedStreamError
from ...framing.sse import ServerSentEvent
from .._aws import exception_error, is_exception
from .._common import event_object
from .._parsed import PARSED_DATA, ParsedEvent, text_of
from ..anthropic.stream import AnthropicReassembler

CHUNK_EVENT = "chunk"
"""The event type of a payload part (``PayloadPart`` in the API reference)."""


class BedrockAnthropicReassembler(AnthropicReassembler):
    """Reassembles ``tool_use`` blocks from the Anthropic events inside ``chunk`` events."""

    dialect: ClassVar[Dialect] = "bedrock_anthropic"

    def on_event(self, event: ServerSentEvent) -> None:
        name = event.event
        if name != CHUNK_EVENT:
            if is_exception(name):
                raise exception_error(self.dialect, event)
            # Event types not known yet are skipped, as AWS adds members to the union.
            return
        data = event.data
        part: Any
        if data is PARSED_DATA:
            part = cast(ParsedEvent, event).payload
        else:
            try:
                part = _json.loads(data)
            except ValueError:
                part = None
        if type(part) is not dict:
            # Not a JSON object: the general reader's answer (its error, or nothing to read).
            part = event_object(event, self.dialect)
            if part is None:
                return
        encoded = part.get("bytes")
        if type(encoded) is not str:
            raise MalformedStreamError(
                f"{self.dialect}: a chunk event without its base64 bytes",
                provider=self.dialect,
                data=text_of(event)[:200],
            )
        try:
            # strict_mode: a character outside the alphabet or bad padding is refused,
            # never skipped (skipping would read other bytes than the ones sent).
            inner = binascii.a2b_base64(encoded, strict_mode=True).decode("utf-8")
        except (binascii.Error, ValueError) as exc:
            raise MalformedStreamError(
                f"{self.dialect}: a chunk's bytes are not base64 of UTF-8 text ({exc})",
                provider=self.dialect,
                data=encoded[:200],
            ) from None
        # Read as Anthropic's own SSE event (its JSON names its type).
        super().on_event(ServerSentEvent("message", inner, "", None))
