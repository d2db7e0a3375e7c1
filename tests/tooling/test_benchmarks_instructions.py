"""``python -m benchmarks.instructions`` counts the right work: each case's runner, as the
child process runs it under callgrind, frames or parses its reads to the right answer."""

from __future__ import annotations

import pytest

from benchmarks import floor, inputs, instructions


@pytest.mark.parametrize("twin", ["py", "c"])
@pytest.mark.parametrize("case", instructions.CASES)
def test_each_case_runs_its_reads_to_the_right_answer(
    case: str, twin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sse_toolcalls import parser
    from sse_toolcalls.framing import sse

    if twin == "c" and sse._CSSEFramer is None:
        pytest.skip("C framer not built")
    # The runner points the parser's module at one twin, as the child process does: put
    # the original back for the tests that follow in this process.
    monkeypatch.setattr(parser, "SSEFramer", vars(parser)["SSEFramer"])
    run = instructions._runner(case, twin)
    result = run(instructions._reads(case))
    if case.startswith("w1-"):
        body = inputs.framing_stream(n_events=instructions._W1_EVENTS).body
        want = floor.IMPLS[0].normalize(floor.frame([body]))
        assert [(e.event, e.data) for e in result] == want
        return
    dialect = case.split("-", 2)[2]
    stream = inputs.parallel_calls(dialect)
    if "-calls-" in case:
        assert [(c.call_id, c.name, c.args) for c in result] == [
            (c.call_id, c.name, c.args) for c in stream.calls
        ]
    else:
        assert [(e.event, e.data) for e in result] == floor.IMPLS[0].normalize(
            floor.frame([stream.body])
        )


def test_unknown_case_is_refused() -> None:
    with pytest.raises(SystemExit):
        instructions.main(["w9-nothing"])
