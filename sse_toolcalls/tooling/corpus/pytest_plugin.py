"""A pytest plugin: one test per stream of your corpus.

Enable it in a ``conftest.py`` and name the corpus folders (``--sse-corpus DIR`` on the
command line, repeatable, or ``sse_corpus = DIR ...`` in the ini file)::

    pytest_plugins = ["sse_toolcalls.tooling.corpus.pytest_plugin"]

then every test that takes ``corpus_stream`` runs once per stream, with its path::

    from sse_toolcalls.tooling.corpus import assert_stream_invariants

    def test_my_streams(corpus_stream):
        assert_stream_invariants(corpus_stream)   # what ``sse-toolcalls check`` does
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .manifest import load, stream_path

__all__ = ["pytest_addoption", "pytest_generate_tests"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--sse-corpus`` option and the ``sse_corpus`` ini setting."""
    parser.addoption(
        "--sse-corpus",
        action="append",
        default=[],
        metavar="DIR",
        help="a corpus folder whose streams parametrize corpus_stream (repeatable)",
    )
    parser.addini("sse_corpus", "corpus folders for corpus_stream", type="paths", default=[])


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``corpus_stream`` with every stream of the named corpora."""
    if "corpus_stream" not in metafunc.fixturenames:
        return
    config = metafunc.config
    folders = [Path(p) for p in config.getoption("sse_corpus")]
    folders += [Path(p) for p in config.getini("sse_corpus")]
    if not folders:
        raise pytest.UsageError("corpus_stream needs a corpus: --sse-corpus DIR or sse_corpus")
    # stream_path refuses an entry that leads outside its folder before any test reads it.
    streams = [
        folder / entry.file
        for folder in folders
        for entry in load(folder)
        if stream_path(folder, entry.file)
    ]
    ids = [f"{folder.name}/{entry.file}" for folder in folders for entry in load(folder)]
    metafunc.parametrize("corpus_stream", streams, ids=ids)
