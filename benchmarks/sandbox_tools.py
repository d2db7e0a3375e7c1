"""The handler the sandbox benchmark calls: imported by module path in the child."""

from __future__ import annotations

from typing import Any


def echo(**arguments: Any) -> dict[str, Any]:
    return {"echo": arguments}
