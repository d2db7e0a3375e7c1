# The compiled twin of sse.SSEFramer (sse_toolcalls/_sse_c.c); sse.py is its only user.
from .sse import SSEFramer as SSEFramer

def _setup(
    *,
    event: type,
    base: type,
    usage: type,
    framing: type,
    too_large: type,
    limit: type,
    max_event_bytes: int,
    max_retry_digits: int,
    max_data_lines: int,
) -> None: ...
