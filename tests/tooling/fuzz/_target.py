"""One atheris fuzz target, in its own process: the library's child
(:func:`sse_toolcalls.tooling.corpus.atheris_engine.child_main`), kept at this path for running one
target by hand. The runner in ``__main__`` starts the library's child directly.

    python -m tests.tooling.fuzz._target TARGET [libFuzzer flags] CORPUS_DIR...

With ``SSE_TOOLCALLS_FUZZ_FINDINGS`` set to a folder a finding does not stop the run (see
the engine's docstring); without it the first finding is a crash, as libFuzzer reports it.
"""

from __future__ import annotations

import atheris  # type: ignore[import-untyped,import-not-found,unused-ignore]

# Only the library is instrumented, and before anything else imports it (tests.tooling.fuzz
# itself imports none of it): the same lines as the engine's CHILD_CODE.
with atheris.instrument_imports(include=["sse_toolcalls"]):
    pass

from sse_toolcalls.tooling.corpus.atheris_engine import child_main

if __name__ == "__main__":
    child_main()
