"""BFCL's multi-turn replay (issue 14, items 1-3): a CI sample through Agent on both
backends, the comparison of results, the parsing of ground-truth calls, and proofs that a
wrong state or a broken ground truth is caught.

The sample is one case in ten of each category (80 cases), each replayed once: the
cases are split between the two backends, the dialects rotate, and every other case runs under
the simulator's faults, so each backend sees every dialect with and without faults. The
full replay is ``sse-toolcalls bfcl`` (and ``--faults``), see README.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any

import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS, ToolSpec
from sse_toolcalls.conversation import UserMessage
from sse_toolcalls.errors import UsageError
from sse_toolcalls.messages import build_request
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.tooling.bfcl import find_source
from sse_toolcalls.tooling.bfcl import multi_turn as mt
from sse_toolcalls.tooling.bfcl.command import format_table
from sse_toolcalls.tooling.simulator import ReceivedResult, ScriptedCall, Simulator, Turn

pytestmark = [
    # As in tests/runtime/test_chaos.py: httpx 0.28 leaves its body iterators to the
    # garbage collector when a stream is abandoned early (an error event, a cut), and trio
    # warns when it finalises them (encode/httpx#3686). Ours are closed explicitly.
    pytest.mark.filterwarnings("ignore:Async generator 'httpx2?\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore2?\\.:ResourceWarning"),
]

SAMPLE_EVERY = 10
"""One case in ten of each category (80 cases), as the issue asks: 105 s + 64 s on the two
backends on the shared machine at load 12, 181 s + 104 s at load 18; the two backends run
on CI's two workers. ``sse-toolcalls bfcl`` is the full run (``--faults``: 3,200
case-dialects, README)."""


def source_or_skip() -> Any:
    source = find_source()
    if source is None:
        message = "no BFCL data: set BFCL_DATA_DIR (pip download --no-deps bfcl-eval)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return source


@pytest.fixture(scope="module")
def code() -> mt.BFCLCode:
    return mt.load_code(source_or_skip())


@pytest.fixture(scope="module")
def cases(code: mt.BFCLCode) -> dict[str, list[mt.MultiTurnCase]]:
    source = source_or_skip()
    return {c: mt.multi_turn_cases(source, c, code) for c in mt.MULTI_TURN_CATEGORIES}


@pytest.fixture(scope="module")
def registries() -> mt.RegistryCache:
    # Shared by both backends' sample: compiling the schemas is most of a case's cost.
    return mt.RegistryCache()


async def replay_all(
    chosen: Sequence[tuple[mt.MultiTurnCase, Dialect, bool]],
    code: mt.BFCLCode,
    registries: mt.RegistryCache,
) -> list[mt.CaseReport]:
    reports: list[mt.CaseReport] = []
    async with Simulator() as sim, AsyncExitStack() as stack:
        clients = {
            d: await stack.enter_async_context(
                client_for(d, model="sim-model-1", api_key="k", base_url=sim.base_url_for(d))
            )
            for d in {dialect for _, dialect, _ in chosen}
        }
        for n, (case, dialect, faults) in enumerate(chosen):
            reports.append(
                await mt.replay_case(
                    case,
                    dialect,
                    sim,
                    code,
                    client=clients[dialect],
                    faults=faults,
                    fault_offset=n,
                    registries=registries,
                )
            )
    return reports


@pytest.mark.anyio
@pytest.mark.timeout(300)
async def test_ci_sample_ends_every_case_in_the_reference_state(
    anyio_backend: str,
    code: mt.BFCLCode,
    cases: dict[str, list[mt.MultiTurnCase]],
    registries: mt.RegistryCache,
) -> None:
    sampled = [c for category in mt.MULTI_TURN_CATEGORIES for c in cases[category][::SAMPLE_EVERY]]
    mine = sampled[0::2] if anyio_backend == "asyncio" else sampled[1::2]
    chosen = [(case, DIALECTS[(n // 2) % len(DIALECTS)], n % 2 == 1) for n, case in enumerate(mine)]
    reports = await replay_all(chosen, code, registries)
    failed = [p for r in reports if not r.passed for p in r.problems]
    assert failed == []
    assert all(r.identical for r in reports if not r.defects)
    # Not vacuous: every category and dialect, hundreds of calls, faults really injected.
    assert {r.category for r in reports} == set(mt.MULTI_TURN_CATEGORIES)
    assert {r.dialect for r in reports} == set(DIALECTS)
    assert sum(r.calls for r in reports) > 60
    assert all(r.faults_injected > 0 for r in reports if r.faults)
    assert all(r.faults_injected == 0 for r in reports if not r.faults)


@pytest.mark.anyio
async def test_a_ground_truth_breaking_its_doc_is_a_defect_and_the_state_differs(
    anyio_backend: str,
    code: mt.BFCLCode,
    cases: dict[str, list[mt.MultiTurnCase]],
    registries: mt.RegistryCache,
) -> None:
    # multi_turn_miss_func_7 holds mkdir out until turn 1. A ground truth calling it in
    # turn 0 breaks the docs offered there: BFCL's executor runs it anyway (it knows every
    # method), the agent refuses a tool it does not offer, so the defect is listed and
    # BFCL's checker sees another state after turn 0.
    case = next(c for c in cases["multi_turn_miss_func"] if c.id == "multi_turn_miss_func_7")
    assert "mkdir" in case.missed_function[1]
    assert case.ground_truth[0] == ()
    early = "mkdir(dir_name='academic_hub')"
    assert early in case.ground_truth[1]
    broken = dataclasses.replace(case, ground_truth=((early,), *case.ground_truth[1:]))
    (report,) = await replay_all([(broken, "anthropic", False)], code, registries)
    assert report.defects == (f"turn 0 call 0 {early}: mkdir is not offered at this turn",)
    assert not report.identical
    assert any("turn 0: state differs" in p for p in report.problems)
    assert report.passed  # a listed defect explains it
    (original,) = await replay_all([(case, "anthropic", False)], code, registries)
    assert original.defects == ()
    assert original.passed and original.identical


@pytest.mark.anyio
async def test_a_call_in_a_turn_whose_ground_truth_is_empty_is_caught(
    anyio_backend: str,
    code: mt.BFCLCode,
    cases: dict[str, list[mt.MultiTurnCase]],
    registries: mt.RegistryCache,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # miss_param's empty turns must change nothing. A model that writes there anyway (the
    # script is changed, the reference is not): the replay reports the call and the state.
    case = next(
        c
        for c in cases["multi_turn_miss_param"]
        if not all(c.ground_truth) and "GorillaFileSystem" in c.involved_classes
    )
    intruder = ScriptedCall(name="touch", args={"file_name": "intruder.txt"}, call_id="intruder")
    scripts = mt._scripts

    def writing_anyway(
        dialect: Dialect,
        calls: tuple[ScriptedCall, ...],
        again: tuple[ScriptedCall, ...],
        fault: str | None,
    ) -> list[list[Turn]]:
        if calls:
            return scripts(dialect, calls, again, fault)
        return [[Turn(calls=(intruder,)), Turn(text="Done anyway.")]]

    monkeypatch.setattr(mt, "_scripts", writing_anyway)
    (report,) = await replay_all([(case, "openai_responses", False)], code, registries)
    assert not report.identical
    assert any("1 call(s) where none is expected" in p for p in report.problems)
    assert any("a turn without ground truth changed the state" in p for p in report.problems)
    assert not report.passed
    monkeypatch.setattr(mt, "_scripts", scripts)
    (original,) = await replay_all([(case, "openai_responses", False)], code, registries)
    assert original.passed and original.identical


def test_positional_arguments_are_named_from_the_signature() -> None:
    def sort(file_name: str, reverse: bool = False) -> None: ...

    def signature(name: str) -> inspect.Signature | None:
        return inspect.signature(sort) if name == "sort" else None

    assert mt.parse_call("sort('final_report.pdf')", signature) == mt.ParsedCall(
        name="sort", args={"file_name": "final_report.pdf"}
    )
    parsed = mt.parse_call("sort('a', reverse=True)", signature)
    assert parsed.args == {"file_name": "a", "reverse": True}
    # Tuples arrive as JSON arrays, as a model would send them; negative numbers are literals.
    assert mt.parse_call("f(x=(1, -2), y={'k': [3]})", signature).args == {
        "x": [1, -2],
        "y": {"k": [3]},
    }
    for bad in ("sort('a', True, 3)", "f(1)", "f(x=g())", "a.b()", "f(**kw)", "f(", "x"):
        with pytest.raises(UsageError):
            mt.parse_call(bad, signature)


def received(content: Any, *, is_error: bool | None = None) -> ReceivedResult:
    text = content if isinstance(content, str) else json.dumps(content)
    return ReceivedResult(call_id="c", name=None, content=text, is_error=is_error)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_declared_tools_are_read_in_every_dialect(dialect: Dialect) -> None:
    tools = [ToolSpec(name=n, description="d", parameters={"type": "object"}) for n in ("cd", "ls")]
    body = build_request(dialect, [UserMessage(text="hi")], tools, model="m")
    assert mt._declared(dialect, body) == {"cd", "ls"}
    assert (
        mt._declared(dialect, build_request(dialect, [UserMessage(text="hi")], model="m")) == set()
    )


@pytest.mark.parametrize("dialect", ["anthropic", "bedrock_anthropic", "bedrock_converse"])
def test_an_ok_error_object_is_a_value_where_results_have_an_error_flag(dialect: Dialect) -> None:
    # BFCL's functions answer {"error": ...} as a value; a flagged dialect says which it is.
    reference = json.dumps({"error": "No such file"})
    assert mt.same_result(reference, dialect, received({"error": "No such file"}, is_error=False))
    assert not mt.same_result(
        reference, dialect, received({"error": "No such file"}, is_error=True)
    )


def test_results_compare_as_values_in_every_dialect() -> None:
    reference = json.dumps({"current_working_directory": "temp"})
    for dialect in DIALECTS:
        assert mt.same_result(reference, dialect, received({"current_working_directory": "temp"}))
        assert not mt.same_result(reference, dialect, received({"current_working_directory": "x"}))
    # BFCL's str() of None and of a list against our JSON text, and Gemini's wrapper of a
    # non-object result (regression: it compared the wrapped text "null" with None).
    assert mt.same_result("None", "openai_chat", received("null"))
    assert mt.same_result("None", "gemini", received({"output": "null"}))
    assert mt.same_result("[1, 2]", "gemini", received({"output": "[1,2]"}))
    assert mt.same_result("plain text", "gemini", received({"output": "plain text"}))
    assert not mt.same_result("None", "gemini", received({"output": "0"}))
    # Objects JSON cannot hold travel as their str: long_context's Ellipsis in a list, and
    # MathAPI's mpmath numbers (BFCL's str() of the dict shows their repr).
    assert mt.same_result("['NVDA', Ellipsis]", "openai_chat", received(["NVDA", "Ellipsis"]))
    assert mt.same_result("{'result': mpf('2.0')}", "anthropic", received({"result": "2.0"}))
    assert mt.same_result("{'result': mpf('2.0')}", "gemini", received({"result": "2.0"}))
    assert not mt.same_result("{'result': mpf('2.0')}", "gemini", received({"result": "3.0"}))
    # A replayed write carries its recorded answer inside the ledger's wrapper.
    wrapped = {
        "replayed": True,
        "ran_at": "2026-01-01T00:00:00Z",
        "message": "m",
        "result": {"a": 1},
    }
    assert mt.same_result('{"a": 1}', "anthropic", received(wrapped))
    # BFCL's errors must arrive as errors, and only errors.
    error = "Error during execution: boom"
    assert mt.same_result(error, "anthropic", received({"error": "tool_failed"}, is_error=True))
    assert mt.same_result(error, "openai_chat", received({"error": {"error": "tool_failed"}}))
    assert not mt.same_result(error, "openai_chat", received({"ok": 1}))
    assert not mt.same_result('{"a": 1}', "anthropic", received({"a": 1}, is_error=True))


def test_sample_spreads_evenly_and_the_table_counts() -> None:
    fake = [
        mt.MultiTurnCase(
            id=f"multi_turn_base_{i}",
            category="multi_turn_base",
            questions=(),
            initial_config={},
            involved_classes=(),
            ground_truth=(),
        )
        for i in range(200)
    ]
    picked = mt.sample(fake, 20)
    assert [c.id for c in picked][:3] == [
        "multi_turn_base_0",
        "multi_turn_base_10",
        "multi_turn_base_20",
    ]
    assert len(picked) == 20
    assert mt.sample(fake, None) == fake
    ok = mt.CaseReport(
        case_id="a",
        category="multi_turn_base",
        dialect="gemini",
        faults=False,
        turns=3,
        calls=5,
        identical=True,
        seconds=1.0,
    )
    bad = dataclasses.replace(ok, case_id="b", identical=False, problems=("x",))
    defect = dataclasses.replace(bad, case_id="c", defects=("d",))
    table = format_table([ok, bad, defect])
    row = next(line for line in table.splitlines() if line.startswith("multi_turn_base"))
    assert row.split()[2:6] == ["3", "1", "1", "1"]  # cases, identical, defects, failed


def test_the_command_says_when_the_data_is_missing(tmp_path: Any) -> None:
    # A fresh interpreter: this session's replay put the wheel on sys.path.
    code = (
        "import importlib.util, sys\n"
        "if importlib.util.find_spec('bfcl_eval') is not None: sys.exit(99)\n"
        "from sse_toolcalls.tooling.cli import main\n"
        f"sys.exit(main(['bfcl', '--data', {str(tmp_path / 'nothing')!r}, '--sample', '1']))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "BFCL_DATA_DIR"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    if done.returncode == 99:
        pytest.skip("bfcl_eval is installed here: there is always data")
    assert done.returncode == 2, done.stderr
    assert "no BFCL data" in done.stderr


MATH_CASES = (
    "multi_turn_base_49",  # logarithm(value=20, base=10, precision=2)
    "multi_turn_base_57",  # logarithm(value=630.0, base=10, precision=5)
    "multi_turn_base_59",
    "multi_turn_long_context_32",  # logarithm(value=36.0, base=6.0, precision=4): exact
)
"""The MathAPI cases whose ``logarithm`` results differed as text in the full run (48
case-dialects: these and their miss_func and miss_param twins, in every dialect)."""


@pytest.mark.anyio
@pytest.mark.timeout(300)
async def test_mathapi_results_agree_with_the_reference_at_the_calls_precision(
    anyio_backend: str,
    code: mt.BFCLCode,
    cases: dict[str, list[mt.MultiTurnCase]],
    registries: mt.RegistryCache,
) -> None:
    chosen = [
        case
        for category in mt.MULTI_TURN_CATEGORIES
        for case in cases[category]
        if case.id in MATH_CASES
    ]
    assert {c.id for c in chosen} == set(MATH_CASES)
    dialect: Dialect = "anthropic" if anyio_backend == "asyncio" else "openai_responses"
    reports = await replay_all([(c, dialect, False) for c in chosen], code, registries)
    assert [p for r in reports for p in r.problems] == []
    assert all(r.identical for r in reports)


def test_an_mpf_reference_is_rendered_as_its_own_call_left_it() -> None:
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(2):
        two_digits = mpmath.mp.prec
    reference = "{'result': mpf('1.3027')}"
    sent = received({"result": "1.3"})
    assert mt.same_result(reference, "anthropic", sent, precision=two_digits)
    # Exact: another number, or more digits than the call asked for, differ.
    assert not mt.same_result(
        reference, "anthropic", received({"result": "1.4"}), precision=two_digits
    )
    assert not mt.same_result(
        reference, "anthropic", received({"result": "1.3027"}), precision=two_digits
    )
    # Without the call's precision the digits stand as they are (the old comparison).
    assert not mt.same_result(reference, "anthropic", sent)
    assert mt.same_result(reference, "anthropic", received({"result": "1.3027"}))


def test_each_side_keeps_its_own_mpmath_precision() -> None:
    mpmath = pytest.importorskip("mpmath")
    before = mpmath.mp.prec
    with mt._own_mpmath_context() as left:
        mpmath.mp.dps = 2  # what MathAPI.logarithm does to the process's one context
    assert mpmath.mp.prec == before
    assert left[0] == 10
