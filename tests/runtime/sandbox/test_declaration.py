"""The declaration and the handler reference: checked when made, refused with our error."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

from sse_toolcalls import UsageError
from sse_toolcalls.runtime import SandboxDeclarationError
from sse_toolcalls.runtime.sandbox import HandlerRef, Sandbox, handler_ref, parse_size

from . import tools


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("256 MiB", 256 * 1024**2),
        ("1GiB", 1024**3),
        ("1.5 KiB", 1536),
        ("64 MB", 64 * 1000**2),
        ("2k", 2000),
        ("100", 100),
        (4096, 4096),
    ],
)
def test_sizes_are_read_with_their_unit(text: int | str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "MiB", "256 XB", "-1 MiB", "0", 0, -5, "1e9", True, 2.5])
def test_a_size_that_cannot_be_read_is_a_declaration_error(text: Any) -> None:
    with pytest.raises(SandboxDeclarationError):
        parse_size(text)


def test_the_declaration_is_frozen_hashable_and_in_bytes() -> None:
    box = Sandbox(read=["a", "b"], write=["c"], env=["HOME"], memory="1 MiB", file_size=10)
    assert box.read == ("a", "b") and box.write == ("c",) and box.env == ("HOME",)
    assert (box.memory_bytes, box.file_size_bytes) == (1024**2, 10)
    assert hash(box) == hash(
        Sandbox(read=["a", "b"], write=["c"], env=["HOME"], memory="1 MiB", file_size=10)
    )
    assert issubclass(SandboxDeclarationError, UsageError)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"read": "/etc"},
        {"write": [""]},
        {"env": "HOME"},
        {"env": ["NOT A NAME"]},
        {"timeout": 0},
        {"timeout": float("inf")},
        {"cpu": -1},
        {"processes": 0},
        {"processes": 1.5},
        {"network": "yes"},
        {"memory": "lots"},
    ],
)
def test_a_bad_declaration_is_refused_when_made(kwargs: dict[str, Any]) -> None:
    with pytest.raises(SandboxDeclarationError):
        Sandbox(**kwargs)


def _closure() -> Callable[[], int]:
    def inner() -> int:
        return 1

    return inner


def _replaced(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


@pytest.mark.parametrize(
    ("handler", "words"),
    [
        (lambda: 1, "lambda"),
        (_closure(), "inside another function"),
        (_replaced(tools.echo), "another object"),
        (HandlerRef(module="no_such_module_anywhere", qualname="f"), "cannot be imported"),
        (
            HandlerRef(module="tests.runtime.sandbox.tools", qualname="missing"),
            "cannot be imported",
        ),
        (functools.partial(tools.echo, a=1), "module-level function"),
    ],
)
def test_a_handler_the_child_cannot_import_is_refused(handler: Any, words: str) -> None:
    with pytest.raises(SandboxDeclarationError, match=words):
        handler_ref(handler)


def test_a_module_level_function_is_referred_to_by_its_path() -> None:
    assert handler_ref(tools.echo) == HandlerRef(
        module="tests.runtime.sandbox.tools", qualname="echo"
    )
