"""JSON that cannot fail (``_jsonsafe``): each row of its module table, held to the value
it promises, and what happens when a value's own methods raise."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import pathlib
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from sse_toolcalls._jsonsafe import MAX_INT_BITS, dumps_safe, json_value, safe_repr, safe_str


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    label: bytes


class Model:
    """What a pydantic model offers: ``model_dump(mode="json")``."""

    def model_dump(self, *, mode: str) -> dict[str, Any]:
        assert mode == "json"
        return {"name": "m", "when": datetime.date(2026, 1, 2)}


class BytesPath:
    def __fspath__(self) -> bytes:
        return b"/tmp/\xff"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Colour.RED, "red"),
        (datetime.date(2026, 12, 1), "2026-12-01"),
        (datetime.time(9, 30), "09:30:00"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        (decimal.Decimal("1.50"), "1.50"),
        (decimal.Decimal("NaN"), None),
        (pathlib.PurePosixPath("/srv/a"), "/srv/a"),
        (BytesPath(), "/tmp/\\xff"),
        (float("inf"), None),
        (2 ** (MAX_INT_BITS + 1), f"<integer of {MAX_INT_BITS + 2} bits>"),
        ((1, {2}, frozenset()), [1, [2], []]),
        ({1: "a", None: "b", 2.5: "d", float("nan"): "e"}, {"1": "a", "null": "e", "2.5": "d"}),
        ({True: "c"}, {"true": "c"}),
        (Point(x=1, label=b"\xfe"), {"x": 1, "label": "\\xfe"}),
        (Model(), {"name": "m", "when": "2026-01-02"}),
        (memoryview(b"ok"), "ok"),
    ],
)
def test_each_row_of_the_table(value: Any, expected: Any) -> None:
    # Keys as the stdlib spells them (NaN, which JSON cannot hold, as null: the later
    # "null" key wins, as in a JSON object read back).
    converted = json_value(value)
    assert converted == expected
    json.dumps(converted, allow_nan=False)  # strict JSON, whatever came in


def test_a_cycle_and_depth_are_cut_not_recursed() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert json_value(loop) == [1, "<cycle>"]
    assert json_value([[[1]]], max_depth=2) == [["<nested too deep>"]]
    shared = [0]
    assert json_value([shared, shared]) == [[0], [0]]  # seen twice is not a cycle


def test_a_container_that_raises_becomes_its_text() -> None:
    class Broken(Mapping[str, int]):
        def __getitem__(self, key: str) -> int:
            raise KeyError(key)

        def __iter__(self) -> Iterator[str]:
            raise RuntimeError("cannot iterate")

        def __len__(self) -> int:
            return 1

        def __repr__(self) -> str:
            return "Broken()"

    assert json_value(Broken()) == "Broken()"


def test_text_renders_fall_back_in_order() -> None:
    class NoStr:
        def __str__(self) -> str:
            raise ValueError("no str")

        def __repr__(self) -> str:
            return "NoStr\udc80"

    class Nothing:
        def __str__(self) -> str:
            raise ValueError

        def __repr__(self) -> str:
            raise ValueError

    assert safe_str(NoStr()) == "NoStr\\x80"  # repr, its lone surrogate escaped
    assert safe_repr(Nothing()) == safe_str(Nothing()) == "<Nothing object>"
    assert json_value(Nothing()) == "<Nothing object>"


def test_dumps_safe_writes_what_json_value_makes() -> None:
    value = {"when": datetime.date(2026, 1, 1), "n": float("nan"), b"k": {1, 2}}
    # A key of another kind is its str (values of bytes are their text).
    assert json.loads(dumps_safe(value)) == {"when": "2026-01-01", "n": None, "b'k'": [1, 2]}
