"""``sse-toolcalls demo --scenario registry``: the three-tools trace, checked by its output."""

from __future__ import annotations

import io
import re

import anyio
import pytest

from sse_toolcalls import DIALECTS, Dialect
from sse_toolcalls.tooling.cli import main
from sse_toolcalls.tooling.demo_registry import registry_demo_registry, run_registry_demo_async


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_malformed_call_is_refused_under_its_id_while_the_others_run_at_once(
    dialect: Dialect,
) -> None:
    out = io.StringIO()
    status = anyio.run(lambda: run_registry_demo_async(dialect=dialect, out=out))
    text = out.getvalue()
    assert status == 0, text
    ids = dict(re.findall(r"→ call #\d (\w+)\(.*?\) · id (\S+)", text)[:3])
    assert set(ids) == {"get_forecast", "convert_currency", "get_local_time"}
    assert (
        f"✗ refused #0 get_forecast · id {ids['get_forecast']}: "
        "$.unit must be one of 'celsius', 'fahrenheit'; got 'kelvin'"
    ) in text
    assert f"✓ ran #1 convert_currency · id {ids['convert_currency']}: 184.00 EUR" in text
    assert f"✓ ran #2 get_local_time · id {ids['get_local_time']}: 21:40" in text
    assert "(convert_currency, get_local_time ran in parallel: 2 at once)" in text
    # The corrected call, under a new id, then the answer.
    corrected = re.findall(r"→ call #0 get_forecast\((.*?)\) · id (\S+)", text)
    assert corrected[1][0] == '{"city":"Lisbon","unit":"celsius"}'
    assert corrected[1][1] != ids["get_forecast"]
    assert "✓ ran #0 get_forecast" in text
    assert text.rstrip().endswith("corrected, and run.")
    assert "Lisbon tonight: clear, 18 °C; 200 USD is 184.00 EUR; it is 21:40 there." in text


def test_the_command_line_runs_the_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--scenario", "registry", "--delay", "0", "--dialect", "gemini"]) == 0
    assert "2 at once" in capsys.readouterr().out


def test_the_scenario_catalogue_is_clean() -> None:
    assert registry_demo_registry().lint() == []
