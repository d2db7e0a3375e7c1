"""The outside corpus: data captured or written by others, beside the repository.

``../shared/`` holds provider streams recorded by others (``external_streams/``) and the
SSE conformance vectors (``conformance/``). It is an outside check, not part of the
project: a person who clones the repository does not have it, and the project's own data
(``recorded_streams/``, the vectors it ships) covers every promise on its own.

A test that reads it carries the ``outside_corpus`` mark (or is a parameter made by
:func:`corpus_params`). Where the folder is missing, such a test is skipped with a reason
that names it; with ``SSE_TOOLCALLS_REQUIRE_SHARED=1`` (CI sets it) it fails instead.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[1]
SHARED: Final = Path(os.environ.get("SSE_TOOLCALLS_SHARED", ROOT.parent / "shared"))
"""The outside folder; ``SSE_TOOLCALLS_SHARED`` moves it."""
EXTERNAL_STREAMS: Final = SHARED / "external_streams"
REQUIRE_ENV: Final = "SSE_TOOLCALLS_REQUIRE_SHARED"

WHAT: Final = {
    "external_streams": "provider streams captured by others, with the calls they must yield",
    "conformance": "the SSE conformance vectors",
}

outside_corpus = pytest.mark.outside_corpus
"""Marks a test that reads ``../shared/``: skipped (or failed, when required) without it."""


def missing_reason(folder: str = "external_streams") -> str | None:
    """Why the outside folder ``folder`` cannot be read, or ``None`` when it can."""
    path = SHARED / folder
    if (path / "MANIFEST.json").is_file() or (folder != "external_streams" and path.is_dir()):
        return None
    return (
        f"the outside corpus {path} ({WHAT.get(folder, folder)}) is not beside the "
        f"repository; it is an outside check, not part of the project "
        f"(set {REQUIRE_ENV}=1 to make its absence a failure)"
    )


def required() -> bool:
    return os.environ.get(REQUIRE_ENV) == "1"


def skip_or_fail(folder: str = "external_streams") -> None:
    """In a test body: skip (or fail, when required) unless ``folder`` can be read."""
    reason = missing_reason(folder)
    if reason is None:
        return
    if required():
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
    pytest.skip(reason)


def manifest_entries() -> list[dict[str, Any]]:
    """The outside corpus's manifest entries, or none when it is missing."""
    if missing_reason() is not None:
        return []
    entries: list[dict[str, Any]] = json.loads((EXTERNAL_STREAMS / "MANIFEST.json").read_text())
    return entries


def corpus_params(
    values: list[Any], ids: list[str], *, label: str = "external_streams"
) -> list[Any]:
    """Parameters made from the outside corpus, marked ``outside_corpus``.

    Where the corpus is missing there is one parameter (``None``), so that the skip (or
    the failure, when required) shows in the report instead of a silently smaller run."""
    if missing_reason() is not None:
        return [pytest.param(None, id=f"{label}-absent", marks=outside_corpus)]
    return [pytest.param(v, id=i, marks=outside_corpus) for v, i in zip(values, ids, strict=True)]
