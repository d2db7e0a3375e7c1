"""The official clients the UI streams are checked with: installed from the lock file,
at the versions ``js/package.json`` pins, with the readers the tests call."""

from __future__ import annotations

import json

from .js_clients import JS, run_script


def test_the_pinned_clients_are_the_ones_that_run() -> None:
    pinned = json.loads((JS / "package.json").read_text(encoding="utf-8"))["dependencies"]
    found = run_script("clients.mjs", b"")
    assert {name: found[name] for name in pinned} == pinned
    assert (found["readUIMessageStream"], found["HttpAgent"]) == ("function", "function")
