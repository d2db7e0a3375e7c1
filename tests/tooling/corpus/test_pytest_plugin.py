"""The pytest plugin: one test per stream of a user's corpus, failing on a broken one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ...wire import Call, encode

CONFTEST = 'pytest_plugins = ["sse_toolcalls.tooling.corpus.pytest_plugin"]\n'
USER_TEST = """
from sse_toolcalls.tooling.corpus import assert_stream_invariants


def test_my_streams(corpus_stream):
    assert_stream_invariants(corpus_stream)
"""


def test_each_stream_is_a_test_and_a_wrong_expectation_fails(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.sse").write_bytes(encode("anthropic", [Call("f", {"n": 1}, "c1")]))
    (corpus / "b.sse").write_bytes(encode("gemini", [Call("g", {}, "c2")]))
    entries = [
        {
            "file": "a.sse",
            "dialect": "anthropic",
            "expected": {
                "outcome": "complete",
                "calls": [{"name": "f", "args": {"n": 1}, "call_id": "c1"}],
            },
        },
        {"file": "b.sse", "dialect": "gemini", "expected": {"outcome": "no_calls", "calls": []}},
    ]
    (corpus / "MANIFEST.json").write_text(json.dumps(entries))
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_user.py").write_text(USER_TEST)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--sse-corpus",
            str(corpus),
            str(tmp_path / "test_user.py"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout
    assert "test_my_streams[corpus/b.sse]" in done.stdout and "calls differ" in done.stdout
