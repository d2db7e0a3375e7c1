# The compiled twin of dialects._parsed._measure_py (sse_toolcalls/_walk_c.c).
from typing import Any

def measure(payload: dict[str, Any], limit: int) -> tuple[int, int] | None: ...
