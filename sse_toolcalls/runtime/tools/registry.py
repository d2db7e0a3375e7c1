"""The tool registry: tools by name, checked calls, their declarations.

A :class:`ToolRegistry` holds :class:`Tool` values built from Python functions
(:meth:`ToolRegistry.register`, usable as a decorator) or from a raw JSON Schema
(:meth:`ToolRegistry.add_schema_tool`). Each tool's schema is checked and compiled once, when
it is added. The registry looks tools up, checks calls and describes tools, synchronously;
it never runs a handler (the runtime does: :mod:`sse_toolcalls.runtime.execute`, through
the :class:`~sse_toolcalls.runtime.Dispatcher`).

**check** (:meth:`ToolRegistry.check`, or :meth:`ToolRegistry.validate`, which returns an
error result instead of raising): the tool is looked up, arguments that were not a JSON
object are refused, the arguments are validated against the schema with narrow coercion
(see :mod:`sse_toolcalls.runtime.tools.coercion`), and decoded into the Python values a function
tool's hints ask for. Nothing runs before this step passes. A refusal is answered with
an error result the model can act on (its texts: :mod:`sse_toolcalls.runtime.tools.results`).

:meth:`ToolRegistry.enable_no_tool_fits` adds a tool the model can call to say that no
tool fits the request, so it need not force an unsuitable one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, ParamSpec, TypeVar, overload

from ..._checks import check_count, check_quantity
from ..._faces import publish
from ...calls import ToolCall, ToolResult, ToolSpec
from ...errors import UsageError
from ...strict import unnullify
from ..errors import (
    InvalidArgumentsError,
    SandboxDeclarationError,
    SandboxUnavailableError,
    ToolError,
    UnknownToolError,
)

# At run time, not under TYPE_CHECKING: Tool's annotations are resolved when the root
# adopts it (typing.get_type_hints must see Sandbox). It loads the engine, and anyio with it.
from ..sandbox import Sandbox
from .context import ToolContext
from .lint import Finding
from .pydantic_validation import FastValidator, fast_validator
from .results import NO_TOOL_FITS_REPLY, count, error_result, first_line
from .signature import DecodeError, context_parameter, function_name, function_schema
from .validation import ArgumentValidator, Coercion, Problem, path_text

__all__ = [
    "DEFAULT_TIMEOUT",
    "NO_TOOL_FITS_NAME",
    "Effect",
    "Tool",
    "ToolRegistry",
    "ValidatedCall",
]

Effect = Literal["read", "write"]
"""``read``: no side effect, safe to retry. ``write``: changes something; never run twice."""

DEFAULT_TOOL_RETRIES = 2
"""ToolRetry answers per tool and run: a model that was told why twice and still gets it
wrong is not converging, and each further round costs the user a request."""

DEFAULT_TIMEOUT = 30.0
"""Seconds a tool may run by default: long for a lookup, short enough that a hung tool
does not hold the turn (and the user) for minutes."""

NO_TOOL_FITS_NAME = "no_suitable_tool"
"""Default name of the built-in tool for saying that no tool fits."""

_NO_TOOL_FITS_DESCRIPTION = (
    "Call this when none of the other tools fits the user's request, instead of calling a "
    "tool that does not fit. Say why in `reason`; then answer the user directly."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A tool the model may call: its declaration, its handler and how it may be run."""

    name: str
    """The name the model calls it by."""

    description: str
    """What the tool does, for the model."""

    parameters: dict[str, Any]
    """JSON Schema (Draft 2020-12 unless its ``$schema`` says otherwise) of the arguments."""

    handler: Callable[..., Any]
    """Called with the arguments as keyword arguments; sync or ``async``."""

    effect: Effect = "read"
    """``read`` (may be retried) or ``write`` (must never run twice for one call)."""

    parallel_safe: bool = True
    """Whether it may run at the same time as other calls of the same turn."""

    timeout: float | None = DEFAULT_TIMEOUT
    """Seconds one run may take, or ``None`` for no limit."""

    decode_arguments: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """Turns validated JSON arguments into the handler's keyword arguments (function tools:
    enum members, dates, dataclass and model instances); ``None`` passes them unchanged."""

    faults: tuple[type[Exception], ...] = ()
    """Exception types that mean the tool itself is broken (they count against its
    circuit breaker), beyond the defaults of :func:`sse_toolcalls.runtime.breaker.blame`:
    declare the ``ValueError`` subclass your client library raises for a server error."""

    transient: tuple[type[Exception], ...] = ()
    """Exception types of faults that may pass (a read is retried after them), beyond
    timeouts and connection errors."""

    retries: int = DEFAULT_TOOL_RETRIES
    """:class:`~sse_toolcalls.runtime.errors.ToolRetry` answers the model may get from this tool
    in one run before the agent gives up on the call (``tool_arguments`` fallback)."""

    context_parameter: str | None = None
    """The handler's parameter that receives the call's
    :class:`~sse_toolcalls.runtime.tools.context.ToolContext` (left out of ``parameters``)."""
    sandbox: Sandbox | None = None
    """Where the handler runs: ``None`` in this process; a declaration, in a child process
    confined to it (:func:`~sse_toolcalls.runtime.sandbox.run_in_sandbox`). The sandbox's own
    ``timeout`` is then the call's one timeout (``timeout`` is ``None``)."""

    allow_unsandboxed: bool = False
    """For a sandboxed tool: run it in a plain child (rlimits and the timeout only) where no
    backend can enforce the declaration, instead of refusing it (fail closed)."""

    needs_approval: bool = False
    """Whether a person must approve each call before it runs (the short form of an
    approval policy that answers ``ask`` for this tool: see
    :class:`~sse_toolcalls.runtime.Agent`)."""

    @property
    def spec(self) -> ToolSpec:
        """The tool as the model sees it."""
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidatedCall:
    """A call that passed validation and may now run."""

    call: ToolCall
    """The call, as the provider sent it (its id is the result's address)."""

    tool: Tool
    """The tool it calls."""

    arguments: dict[str, Any]
    """The validated JSON arguments, after coercion (an idempotency key is made of
    ``kwargs``, and of these only when a decoded value has no canonical form)."""

    kwargs: dict[str, Any]
    """The keyword arguments the handler receives (decoded for function tools)."""

    coercions: tuple[Coercion, ...] = ()
    """The values that were coerced to pass validation, for diagnostics."""

    context: ToolContext[Any] | None = None
    """What the executor passes as the tool's context parameter (the dispatcher sets it
    when the tool declares one; never part of ``kwargs`` nor of an idempotency key)."""


_Handler = Callable[..., Any]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class ToolRegistry:
    """Tools by name; checks calls against their schemas and declares the tools.

    Example::

        registry = ToolRegistry()

        @registry.register(effect="read")
        def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
            '''Current weather in a city.

            Args:
                city: The city name, such as "Paris".
                unit: The temperature unit.
            '''

        checked = registry.validate(call)   # a ValidatedCall, or an error result for call
        reports = await Dispatcher(registry).dispatch([call])   # runs it (the runtime)
    """

    def __init__(
        self,
        *,
        show_error_details: bool = False,
        strict: bool = False,
        allow_unsandboxed: bool = False,
    ) -> None:
        """Make an empty registry.

        Args:
            show_error_details: Put a failing handler's exception message in the error
                result the model sees (off by default: it may hold internals).
            strict: The tools were declared in OpenAI's strict mode
                (``build_request(..., strict=True)``): a ``null`` the model sent for an
                optional property means "absent" and is removed before validation
                (:func:`~sse_toolcalls.strict.unnullify`).
            allow_unsandboxed: Let sandboxed tools run in a plain child process (rlimits
                and the timeout only) where no sandbox backend can enforce their
                declaration; by default such a tool is refused when it is registered
                (fail closed).
        """
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, ArgumentValidator] = {}
        # Function tools' pydantic fast paths, where one is exact (pydantic_validation).
        self._fast: dict[str, FastValidator] = {}
        self._no_tool_fits: str | None = None
        self.show_error_details = show_error_details
        """Whether handler exception messages reach the model."""
        self.strict = strict
        """Whether calls come from strictly declared tools (nulls mean absent)."""
        self.allow_unsandboxed = allow_unsandboxed
        """Whether sandboxed tools may run unsandboxed where nothing can enforce them."""

    # ----------------------------------------------------------------------------------
    # Adding tools

    def add(self, tool: Tool) -> Tool:
        """Add a tool, checking and compiling its schema.

        Returns:
            ``tool`` (a sandboxed one with ``timeout=None``: its sandbox owns it).

        Raises:
            UsageError: the name is empty or taken, or the schema is not a valid JSON
                Schema for an object.
            SandboxDeclarationError: a sandboxed tool's handler cannot be imported by its
                module path (a lambda, a closure, a function of ``__main__``).
            SandboxUnavailableError: no backend here can enforce the tool's sandbox and
                neither the tool nor the registry allows running it unsandboxed.
        """
        if not tool.name:
            raise UsageError("a tool needs a non-empty name")
        if tool.name in self._tools:
            raise UsageError(f"a tool named {tool.name!r} is already registered")
        if tool.parameters.get("type", "object") != "object":
            raise UsageError(f"{tool.name}: the parameters schema must describe an object")
        if tool.timeout is not None:
            check_quantity(f"{tool.name}: timeout", tool.timeout, positive=True)
        if tool.effect not in ("read", "write"):
            raise UsageError(f"{tool.name}: effect must be 'read' or 'write'")
        check_count(f"{tool.name}: retries", tool.retries, minimum=0)
        for declared in (*tool.faults, *tool.transient):
            if not (isinstance(declared, type) and issubclass(declared, Exception)):
                raise UsageError(
                    f"{tool.name}: faults and transient must be exception types, not {declared!r}"
                )
        validator = ArgumentValidator(tool.parameters)
        if tool.sandbox is not None:
            _check_sandboxed(tool, allow_unsandboxed=self.allow_unsandboxed)
            # The sandbox owns the timeout (see _timeout); a Tool built by hand keeps
            # the default one, which would race the engine's.
            tool = dataclasses.replace(tool, timeout=None)
        self._tools[tool.name] = tool
        self._validators[tool.name] = validator
        return tool

    @overload
    def register(
        self,
        fn: Callable[_P, _R],
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        effect: Effect = "read",
        parallel_safe: bool = True,
        timeout: float | None = DEFAULT_TIMEOUT,
        faults: tuple[type[Exception], ...] = (),
        transient: tuple[type[Exception], ...] = (),
        retries: int = DEFAULT_TOOL_RETRIES,
        sandbox: Sandbox | None = None,
        allow_unsandboxed: bool = False,
        needs_approval: bool = False,
    ) -> Callable[_P, _R]: ...

    @overload
    def register(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        effect: Effect = "read",
        parallel_safe: bool = True,
        timeout: float | None = DEFAULT_TIMEOUT,
        faults: tuple[type[Exception], ...] = (),
        transient: tuple[type[Exception], ...] = (),
        retries: int = DEFAULT_TOOL_RETRIES,
        sandbox: Sandbox | None = None,
        allow_unsandboxed: bool = False,
        needs_approval: bool = False,
    ) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]: ...

    def register(
        self,
        fn: _Handler | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        effect: Effect = "read",
        parallel_safe: bool = True,
        timeout: float | None = DEFAULT_TIMEOUT,
        faults: tuple[type[Exception], ...] = (),
        transient: tuple[type[Exception], ...] = (),
        retries: int = DEFAULT_TOOL_RETRIES,
        sandbox: Sandbox | None = None,
        allow_unsandboxed: bool = False,
        needs_approval: bool = False,
    ) -> _Handler | Callable[[_Handler], _Handler]:
        """Add a Python function as a tool; usable as ``@register`` or ``@register(...)``.

        The schema comes from the type hints, the descriptions from the docstring (see
        :mod:`sse_toolcalls.runtime.tools.signature`).

        Args:
            fn: The function (sync or ``async``).
            name: The tool name; the function's ``__name__`` by default.
            description: For the model; the docstring's description by default.
            effect: ``read`` or ``write``.
            parallel_safe: Whether it may run beside other calls of its turn.
            timeout: Seconds per run, or ``None``.
            faults: exception types that blame the tool (``Tool.faults``).
            transient: exception types of passing faults, retried for reads
                (``Tool.transient``).
            retries: ``ToolRetry`` answers per run (``Tool.retries``).
            timeout: Seconds per run, or ``None``; a sandboxed tool's timeout is its
                sandbox's (``Sandbox.timeout``), and giving this one too is refused.
            sandbox: Run each call in a child process confined to this declaration
                (the handler must be a module-level function).
            allow_unsandboxed: Run this sandboxed tool in a plain child where no backend
                can enforce its declaration (as ``ToolRegistry(allow_unsandboxed=True)``
                does for every tool), instead of refusing it here.
            needs_approval: Each call waits for a person's approval before it runs.

        Returns:
            The function itself, unchanged (or a decorator that returns it).

        Raises:
            UsageError: the signature cannot be described as JSON Schema, or the name is
                taken, or a sandboxed tool was given its own ``timeout``.
            SandboxDeclarationError: a sandboxed handler cannot be imported by its module
                path.
            SandboxUnavailableError: nothing here can enforce ``sandbox`` (fail closed).
        """

        def decorate(func: _Handler) -> _Handler:
            doc, parameters, decode = function_schema(func)
            context = context_parameter(func)
            added = self.add(
                Tool(
                    name=name or function_name(func),
                    description=description if description is not None else doc,
                    parameters=parameters,
                    handler=func,
                    effect=effect,
                    parallel_safe=parallel_safe,
                    timeout=_timeout(timeout, sandbox),
                    decode_arguments=decode,
                    faults=tuple(faults),
                    transient=tuple(transient),
                    retries=retries,
                    context_parameter=context,
                    sandbox=sandbox,
                    allow_unsandboxed=allow_unsandboxed,
                    needs_approval=needs_approval,
                )
            )
            fast = fast_validator(func)
            if fast is not None:
                self._fast[added.name] = fast
            return func

        return decorate if fn is None else decorate(fn)

    def add_schema_tool(
        self,
        name: str,
        parameters: dict[str, Any],
        handler: _Handler,
        *,
        description: str = "",
        effect: Effect = "read",
        parallel_safe: bool = True,
        timeout: float | None = DEFAULT_TIMEOUT,
        faults: tuple[type[Exception], ...] = (),
        transient: tuple[type[Exception], ...] = (),
        sandbox: Sandbox | None = None,
        allow_unsandboxed: bool = False,
        needs_approval: bool = False,
    ) -> Tool:
        """Add a tool declared by a raw JSON Schema; the handler gets the JSON arguments
        (``faults`` and ``transient`` as for :meth:`register`).

        Returns:
            The new tool.

        Raises:
            UsageError: the schema is invalid, or the name is taken.
        """
        return self.add(
            Tool(
                name=name,
                description=description,
                parameters=parameters,
                handler=handler,
                effect=effect,
                parallel_safe=parallel_safe,
                timeout=_timeout(timeout, sandbox),
                sandbox=sandbox,
                allow_unsandboxed=allow_unsandboxed,
                needs_approval=needs_approval,
                faults=tuple(faults),
                transient=tuple(transient),
            )
        )

    def enable_no_tool_fits(
        self, name: str = NO_TOOL_FITS_NAME, *, description: str = _NO_TOOL_FITS_DESCRIPTION
    ) -> Tool:
        """Offer the model a tool to call when none of the others fits the request.

        Its one argument is ``reason`` (a string); it does nothing and tells the model to
        answer directly. Evaluations that count "the model made a call" should leave it
        out: see :meth:`is_no_tool_fits`.

        Returns:
            The new tool.

        Raises:
            UsageError: it is already enabled, or the name is taken.
        """
        if self._no_tool_fits is not None:
            raise UsageError(f"the no-tool-fits tool is already enabled as {self._no_tool_fits!r}")

        def no_tool_fits(reason: str) -> str:
            return NO_TOOL_FITS_REPLY

        tool = self.add_schema_tool(
            name,
            {
                "type": "object",
                "properties": {
                    "reason": {
                        "type": "string",
                        "description": "Why none of the available tools fits the request.",
                    }
                },
                "required": ["reason"],
                "additionalProperties": False,
            },
            no_tool_fits,
            description=description,
            timeout=None,
        )
        self._no_tool_fits = name
        return tool

    def is_no_tool_fits(self, call: ToolCall) -> bool:
        """Return whether ``call`` is the model saying that no tool fits."""
        return self._no_tool_fits is not None and call.name == self._no_tool_fits

    def remove(self, name: str) -> Tool:
        """Remove the tool named ``name`` (an MCP session's tools, when it ends).

        Returns:
            The tool removed.

        Raises:
            UsageError: no tool has that name.
        """
        tool = self._tools.pop(name, None)
        if tool is None:
            raise UsageError(f"there is no tool named {name!r} to remove")
        del self._validators[name]
        if self._no_tool_fits == name:
            self._no_tool_fits = None
        return tool

    # ----------------------------------------------------------------------------------
    # Looking up

    def get(self, name: str) -> Tool | None:
        """Return the tool named ``name``, or ``None``."""
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __repr__(self) -> str:
        tools = ", ".join(
            f"{t.name} ({t.effect}{', sandboxed' if t.sandbox is not None else ''}"
            f"{', needs approval' if t.needs_approval else ''})"
            for t in self
        )
        return f"<ToolRegistry {len(self)} tool(s): {tools or 'none'}>"

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        """Return the tool names, in the order they were added."""
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        """Return every tool as the model sees it, in the order they were added."""
        return [tool.spec for tool in self._tools.values()]

    def lint(self) -> list[Finding]:
        """Check the tools' descriptions as a model needs them (what each tool does and
        when to use it, every parameter described, enums, formats, overlaps, escape
        hatches: :mod:`sse_toolcalls.runtime.tools.lint`).

        Returns:
            The findings, in catalogue order (empty when the catalogue is clean).
        """
        from .lint import lint_tools

        return lint_tools(self.specs())

    # ----------------------------------------------------------------------------------
    # Checking

    def check(self, call: ToolCall) -> ValidatedCall:
        """Check ``call`` against its tool; nothing runs.

        Returns:
            The validated call, with coerced and decoded arguments.

        Raises:
            UnknownToolError: no tool has the call's name.
            InvalidArgumentsError: the arguments were not a JSON object, or break the
                schema; ``problems`` lists every problem with its path.
        """
        tool = self._tools.get(call.name)
        if tool is None:
            raise UnknownToolError(f"there is no tool named {call.name!r}", call=call)
        if call.arguments_error is not None:
            problem = Problem(
                path="$",
                kind="invalid_json",
                message=(
                    f"the arguments were not valid JSON ({call.arguments_error}); "
                    "send them as one JSON object"
                ),
            )
            raise InvalidArgumentsError(
                f"the arguments for {tool.name!r} were not valid JSON",
                call=call,
                problems=(problem,),
            )
        args = unnullify(call.args, tool.parameters) if self.strict else call.args
        fast = self._fast.get(tool.name)
        if fast is not None:
            # Accepts only what the JSON Schema path accepts unchanged, with the same
            # values; a refusal says nothing and the JSON Schema path explains it.
            decoded = fast(args)
            if decoded is not None:
                return ValidatedCall(call=call, tool=tool, arguments=args, kwargs=decoded)
        arguments, coercions, problems = self._validators[tool.name].validate(args)
        if problems:
            raise InvalidArgumentsError(
                f"the arguments for {tool.name!r} have {count(len(problems), 'problem')}",
                call=call,
                problems=problems,
            )
        kwargs = arguments
        if tool.decode_arguments is not None:
            try:
                kwargs = tool.decode_arguments(arguments)
            except Exception as exc:
                # A check the schema cannot express (a pydantic validator, say) refused it.
                raise InvalidArgumentsError(
                    f"the arguments for {tool.name!r} were refused by the tool's own checks",
                    call=call,
                    problems=_decode_problems(exc),
                ) from exc
        return ValidatedCall(
            call=call, tool=tool, arguments=arguments, kwargs=kwargs, coercions=coercions
        )

    def validate(self, call: ToolCall) -> ValidatedCall | ToolResult:
        """Check ``call``; a refusal comes back as an error result instead of raising.

        Returns:
            The validated call, or a :class:`ToolResult` with ``is_error=True`` addressed
            to ``call`` that lists every problem.
        """
        try:
            return self.check(call)
        except (UnknownToolError, InvalidArgumentsError) as exc:
            return self.error_result(exc)

    # ----------------------------------------------------------------------------------
    # Error results

    def error_result(self, exc: ToolError) -> ToolResult:
        """Turn a refusal or failure into the error result the model sees
        (:func:`sse_toolcalls.runtime.tools.results.error_result`, with this registry's tool names
        and ``show_error_details``).

        Returns:
            A :class:`ToolResult` with ``is_error=True`` addressed to ``exc.call``.

        Raises:
            UsageError: ``exc`` carries no call.
        """
        return error_result(
            exc, available_tools=self.names(), show_error_details=self.show_error_details
        )


def _timeout(timeout: float | None, sandbox: Sandbox | None) -> float | None:
    """The tool's in-process timeout: none for a sandboxed tool, whose sandbox owns it.

    One owner per timeout: the engine kills the child's whole tree at ``Sandbox.timeout``
    and says so in a ``timeout`` violation; a second timer in :func:`run_once` would race
    it and answer the same overrun in another words.
    """
    if sandbox is None:
        return timeout
    if timeout != DEFAULT_TIMEOUT:
        raise UsageError(
            "a sandboxed tool's timeout is its sandbox's: write Sandbox(timeout=...) "
            "instead of timeout=..."
        )
    return None


def _check_sandboxed(tool: Tool, *, allow_unsandboxed: bool) -> None:
    """Refuse, at registration, a sandboxed tool that could never run as declared."""
    from ..sandbox import available_backends, handler_ref

    if not isinstance(tool.sandbox, Sandbox):
        raise UsageError(f"{tool.name}: sandbox= takes a Sandbox declaration")
    handler_ref(tool.handler)  # raises SandboxDeclarationError, naming the problem
    if tool.context_parameter is not None:
        # The child receives JSON arguments over a pipe; the context holds the
        # application's live objects (deps, the call), which cannot cross it, and a
        # sandboxed tool must not reach them anyway.
        raise SandboxDeclarationError(
            f"{tool.name}: a sandboxed handler cannot take a ToolContext parameter "
            f"({tool.context_parameter!r}): its child gets JSON arguments only; pass what it "
            "needs as arguments, or leave the tool unsandboxed"
        )
    if available_backends(tool.sandbox) or allow_unsandboxed or tool.allow_unsandboxed:
        return
    raise SandboxUnavailableError(
        f"{tool.name}: no sandbox backend can enforce its declaration on this machine "
        "(install bubblewrap, or use a kernel with Landlock); pass allow_unsandboxed=True "
        "to the registry or to register() to run it in a plain child process instead"
    )


def _decode_problems(exc: Exception) -> tuple[Problem, ...]:
    """Problems from a decoder's refusal, per field where pydantic says which."""
    prefix: list[str | int] = []
    cause: Exception = exc
    if isinstance(exc, DecodeError):
        prefix, cause = [exc.parameter], exc.cause
    errors = getattr(cause, "errors", None)
    if callable(errors):
        try:
            details = list(errors())
        except Exception:
            details = []
        problems = [
            Problem(
                path=path_text([*prefix, *d.get("loc", ())]),
                kind="constraint",
                message=str(d.get("msg", "is not accepted")),
            )
            for d in details
            if isinstance(d, dict)
        ]
        if problems:
            return tuple(problems)
    return (Problem(path=path_text(prefix), kind="constraint", message=first_line(cause)),)


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
