"""Choosing the backend: forced by argument or environment; fail closed where none works."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

from sse_toolcalls import UsageError
from sse_toolcalls.runtime import SandboxUnavailableError, ToolError
from sse_toolcalls.runtime.sandbox import (
    BACKEND_ENV,
    Backend,
    Sandbox,
    available_backends,
    run_in_sandbox,
)

from . import tools

pytestmark = pytest.mark.anyio


def test_both_backends_work_on_this_machine() -> None:
    assert available_backends() == ("bwrap", "landlock")


async def test_auto_takes_bubblewrap() -> None:
    result = await run_in_sandbox(Sandbox(), tools.echo, {"a": 1})
    assert result.backend == "bwrap" and result.value["arguments"] == {"a": 1}


@pytest.mark.parametrize("name", ["bwrap", "landlock"])
async def test_the_environment_variable_forces_a_backend(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BACKEND_ENV, name)
    assert (await run_in_sandbox(Sandbox(), tools.echo, {})).backend == name


async def test_none_available_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxUnavailableError, match="allow_unsandboxed") as caught:
        await run_in_sandbox(Sandbox(), tools.echo, {}, backend="none")
    assert isinstance(caught.value, ToolError)
    monkeypatch.setenv(BACKEND_ENV, "none")
    with pytest.raises(SandboxUnavailableError):
        await run_in_sandbox(Sandbox(), tools.echo, {})


async def test_a_missing_bwrap_is_not_replaced_by_another_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Asked for by name, a backend that does not work here is refused, never swapped.
    from sse_toolcalls.runtime.sandbox.backends import bubblewrap

    monkeypatch.setattr(bubblewrap, "binary", lambda: None)
    with pytest.raises(SandboxUnavailableError, match="bubblewrap") as caught:
        await run_in_sandbox(Sandbox(), tools.echo, {}, backend="bwrap")
    assert caught.value.reasons == ("bubblewrap is missing or cannot run here",)
    assert (await run_in_sandbox(Sandbox(), tools.echo, {})).backend == "landlock"


async def test_unsandboxed_only_when_allowed_and_still_limited() -> None:
    result = await run_in_sandbox(
        Sandbox(), tools.echo, {"a": 1}, backend="none", allow_unsandboxed=True
    )
    assert result.backend == "unsandboxed" and result.value["arguments"] == {"a": 1}
    slow = await run_in_sandbox(
        Sandbox(timeout=0.5), tools.sleep, {"seconds": 30}, backend="none", allow_unsandboxed=True
    )
    assert slow.violation is not None and slow.violation.kind == "timeout"


async def test_an_unknown_backend_name_is_a_usage_error() -> None:
    bad: Backend = "chroot"  # type: ignore[assignment]
    with pytest.raises(UsageError, match="chroot"):
        await run_in_sandbox(Sandbox(), tools.echo, {}, backend=bad)


async def test_arguments_that_are_not_json_are_a_bad_result() -> None:
    result = await run_in_sandbox(Sandbox(), tools.echo, {"a": {1, 2}})
    assert result.violation is not None and result.violation.kind == "bad_result"


async def test_arguments_that_are_not_a_mapping_of_names_are_a_usage_error() -> None:
    for bad in ([1, 2], {1: "x"}):
        with pytest.raises(UsageError, match="mapping"):
            await run_in_sandbox(Sandbox(), tools.echo, bad)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="Sandbox"):
        await run_in_sandbox({"read": []}, tools.echo, {})  # type: ignore[arg-type]


def test_the_socket_filter_fails_closed_on_an_unknown_machine() -> None:
    from sse_toolcalls.runtime.sandbox import _child

    with pytest.raises(OSError) as raised:
        _child.socket_filter("s390x")
    assert raised.value.errno == errno.ENOSYS
    # Every jump lands inside the program, which ends in its two answers.
    program = _child.socket_filter("x86_64")
    for at, (code, jt, jf, _k) in enumerate(program):
        if code & 0x07 == 0x05:  # BPF_JMP
            assert at + 1 + max(jt, jf) < len(program)
    assert [code for code, *_ in program[-2:]] == [0x06, 0x06]  # BPF_RET
    assert program[-1][3] & 0xFFFF == errno.EACCES


def test_the_backend_names_are_one_list() -> None:
    # The Literal is for type checkers; the registry is what runs: the two must agree, or
    # a name would type-check and be refused (or the other way round).
    from typing import get_args

    from sse_toolcalls.runtime.sandbox import backends

    names = [backend.name for backend in backends.BACKENDS]
    assert get_args(Backend) == ("auto", *names, "none")
    assert len(set(names)) == len(names) and "unsandboxed" not in names
    for backend in (*backends.BACKENDS, backends.UNSANDBOXED):
        assert backends.by_name(backend.name) is backend and backend.enforces


def test_the_child_is_told_what_to_do_never_which_backend(tmp_path: Path) -> None:
    # _child.py runs without the package: the request carries the backend's answers
    # (confine with Landlock, own namespaces), not its name.
    from sse_toolcalls import _json
    from sse_toolcalls.runtime.sandbox import _exchange, backends, handler_ref

    ref = handler_ref(tools.echo)
    for backend in (*backends.BACKENDS, backends.UNSANDBOXED):
        prepared = _exchange.prepare(Sandbox(), ref, {}, backend, str(tmp_path))
        assert not isinstance(prepared, Exception) and isinstance(prepared, tuple)
        argv, payload = prepared
        request = _json.loads(payload)
        assert (request["landlock"], request["namespaced"]) == (
            backend.worker_landlock,
            backend.own_namespaces,
        )
        assert backend.name not in {str(value) for value in request.values()}
        # The interpreter runs the child script, under the backend's own launcher if any.
        assert argv[-1] == str(_exchange.CHILD)
        launcher = os.path.basename(argv[0]) if backend.own_namespaces else argv[0]
        assert launcher == ("bwrap" if backend.own_namespaces else sys.executable)
