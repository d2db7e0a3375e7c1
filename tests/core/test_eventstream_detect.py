"""An event stream whose first message is an error is recognised as Bedrock's.

``ToolCallParser(None)`` sniffs an event stream from its first byte, then the dialect from
its first event. An ``exception`` message names itself (``throttlingException``), but an
``error`` message (AWS's unmodeled errors: ``:error-code``, ``:error-message``) reaches
detection as the seam's ``error`` event, and an ``exception`` message without its
``:exception-type`` as ``exception``: neither may end as "the dialect could not be
recognised" when the named dialect reports the provider's error.
"""

from __future__ import annotations

import pytest

from sse_toolcalls import Dialect, ProviderError, ToolCallParser
from tests.core.test_eventstream_wire import STRING, bedrock_event, encode

ERROR = encode(
    [
        (":message-type", STRING, "error"),
        (":error-code", STRING, "InternalFailure"),
        (":error-message", STRING, "An internal error occurred."),
    ],
    b"",
)
UNNAMED_EXCEPTION = encode(
    [(":content-type", STRING, "application/json"), (":message-type", STRING, "exception")],
    b'{"message":"Too many requests"}',
)
NAMED_EXCEPTION = encode(
    [
        (":exception-type", STRING, "serviceUnavailableException"),
        (":content-type", STRING, "application/json"),
        (":message-type", STRING, "exception"),
    ],
    b'{"message":"Service unavailable"}',
)
UNKNOWN = bedrock_event("futureEventType", b'{"p":"abc"}')

BODIES = {
    "error message first": ERROR,
    "unnamed exception first": UNNAMED_EXCEPTION,
    "named exception first": NAMED_EXCEPTION,
    "an unknown event, then an error message": UNKNOWN + ERROR,
}


def provider_error(dialect: Dialect | None, body: bytes) -> ProviderError:
    parser = ToolCallParser(dialect)
    with pytest.raises(ProviderError) as info:
        parser.feed(body)
        parser.finish()
    return info.value


@pytest.mark.parametrize("name", sorted(BODIES))
def test_a_first_error_is_the_providers_whether_the_dialect_is_named_or_not(name: str) -> None:
    body = BODIES[name]
    named = provider_error("bedrock_converse", body)
    detected = provider_error(None, body)
    assert (detected.code, detected.retryable, str(detected)) == (
        named.code,
        named.retryable,
        str(named),
    )
    assert detected.provider == "bedrock_converse"
    # Byte by byte too: the sniffer sees one byte, detection one event.
    parser = ToolCallParser(None)
    with pytest.raises(ProviderError):
        for i in range(len(body)):
            parser.feed(body[i : i + 1])
        parser.finish()
