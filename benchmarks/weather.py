"""The weather tool's schema and its two calls, one valid and one wrong five ways: the one
definition that ``bench_validation.py`` times and ``tests/runtime/tools/test_tools_validation.py``
checks, so the benchmark's numbers are about the schema the tests hold to their answers.

Five properties: a string, an enum, an integer with a range, a nested object and a date
(the schema of ``research/peers_execution.md`` section 3.3).
"""

from __future__ import annotations

from typing import Any

__all__ = ["INVALID", "SCHEMA", "VALID"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "location": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat", "lon"],
            "additionalProperties": False,
        },
        "start": {"type": "string", "format": "date"},
    },
    "required": ["city", "unit", "days", "location", "start"],
    "additionalProperties": False,
}
"""The arguments of ``get_weather``."""

VALID: dict[str, Any] = {
    "city": "Paris",
    "unit": "celsius",
    "days": 5,
    "location": {"lat": 48.85, "lon": 2.35},
    "start": "2025-06-01",
}
"""A call :data:`SCHEMA` accepts as it is."""

INVALID: dict[str, Any] = {
    "city": "Paris",
    "unit": "kelvin",
    "days": "five",
    "location": {"lon": 2.35},
    "start": "2025-02-30",
    "extra": 1,
}
"""A call with five problems: ``unit`` outside the enum, ``days`` a word, ``lat``
missing, a date that does not exist, a field the schema does not take."""
