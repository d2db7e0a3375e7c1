"""The plugin's fixture, used as users get it."""

from __future__ import annotations

from sse_toolcalls.tooling.simulator.pytest_plugin import simulator

__all__ = ["simulator"]
