"""The tools layer: a registry of tools, validated calls, and results for the model.

- :class:`ToolRegistry` (``registry``): tools from Python functions or raw JSON Schema,
  checked and compiled once; ``check``/``validate`` a call (the runtime runs it).
- :mod:`~sse_toolcalls.runtime.tools.signature`: JSON Schema from type hints and docstrings.
- :mod:`~sse_toolcalls.runtime.tools.validation`: ``jsonschema`` Draft 2020-12 with strict format
  checkers (:mod:`~sse_toolcalls.runtime.tools.formats`), every problem with its path.
- :mod:`~sse_toolcalls.runtime.tools.coercion`: the narrow coercion table.
- :mod:`~sse_toolcalls.runtime.tools.results`: every result text the model reads.
- :mod:`~sse_toolcalls.runtime.tools.lint`: the catalogue's description checks
  (``registry.lint()``).

Importing this package does not import ``jsonschema``: that happens when the first tool is
added (its schema is checked and compiled then), so ``import sse_toolcalls`` stays light.
"""

from .coercion import coerce_string
from .context import ToolContext
from .lint import Finding
from .registry import (
    DEFAULT_TIMEOUT,
    NO_TOOL_FITS_NAME,
    Effect,
    Tool,
    ToolRegistry,
    ValidatedCall,
)
from .signature import function_schema
from .validation import ArgumentValidator, Coercion, Problem, problem_json

__all__ = [
    "DEFAULT_TIMEOUT",
    "NO_TOOL_FITS_NAME",
    "ArgumentValidator",
    "Coercion",
    "Effect",
    "Finding",
    "Problem",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ValidatedCall",
    "coerce_string",
    "function_schema",
    "problem_json",
]
