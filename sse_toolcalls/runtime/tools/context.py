"""What a tool may know about the call it serves: :class:`ToolContext`.

A handler declares a parameter typed ``ToolContext`` (or ``ToolContext[Deps]``); it is
left out of the tool's JSON Schema (the model never sees or fills it) and the executor
passes it at run time: the conversation id, the request id, the call, and the
application's own dependencies (``Agent(deps=...)``, overridden by ``run(..., deps=...)``)::

    @registry.register(effect="write")
    async def send_money(ctx: ToolContext[Bank], to: str, amount: int) -> str:
        return await ctx.deps.transfer(to, amount, idempotency_key=ctx.request_id)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from ..._faces import publish
from ...calls import ToolCall

__all__ = ["Deps", "ToolContext"]

Deps = TypeVar("Deps")
"""The type of the application's dependencies."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext(Generic[Deps]):
    """The context of one call, given to a handler that declares it."""

    conversation_id: str
    """The conversation's id (``Agent.run(conversation_id=...)``; random when not given)."""

    request_id: str
    """The user request's id (``Agent.run(request_id=...)``; random when not given)."""

    call: ToolCall
    """The call being answered, as the provider sent it."""

    deps: Deps
    """The application's dependencies (``None`` when none were given)."""


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
