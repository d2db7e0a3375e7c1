# The compiled twins of sse.SSEFramer and dialects._common.json_scan_py (sse_toolcalls/_sse_c.c).
from .framing.sse import SSEFramer as SSEFramer

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
def _scan_version(name: str | None = None, /) -> str: ...
def json_scan(text: str) -> tuple[int, bool]: ...
def _json_scan_version(name: str | None = None, /) -> str: ...
