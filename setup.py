"""The optional compiled framer (sse_toolcalls/_sse_c.c); everything else is in pyproject.toml.

setuptools builds the extension with the system's C compiler. A machine without one (or
with SSE_TOOLCALLS_NO_EXTENSIONS=1 set at install) still installs: the build says once
that the pure-Python twin will be used, and framing/sse.py picks that twin at import.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

_NOTE = (
    "\n*** sse_toolcalls: the compiled framer was not built ({reason}); the pure-Python "
    "twin is used (same classes, same results, slower framing). ***\n"
)


class _OptionalBuildExt(build_ext):
    """build_ext that falls back to the pure-Python twin instead of failing the install."""

    _told = False

    def _tell(self, reason: str) -> None:
        if not _OptionalBuildExt._told:
            _OptionalBuildExt._told = True
            sys.stderr.write(_NOTE.format(reason=reason))

    def run(self) -> None:
        if os.environ.get("SSE_TOOLCALLS_NO_EXTENSIONS", "") not in ("", "0"):
            self._tell("SSE_TOOLCALLS_NO_EXTENSIONS is set")
            return
        try:
            super().run()
        except Exception as exc:  # no compiler at all: distutils' own errors vary
            self._tell(f"{type(exc).__name__}: {exc}")

    def build_extension(self, ext: Any) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # the compiler ran and failed
            self._tell(f"{type(exc).__name__}: {exc}")


# SSE_TOOLCALLS_CFLAGS lets scripts/sanitize add -fsanitize=... without a second recipe.
_extra = os.environ.get("SSE_TOOLCALLS_CFLAGS", "").split()

setup(
    ext_modules=[
        Extension(
            "sse_toolcalls._sse_c",
            sources=["sse_toolcalls/_sse_c.c"],
            extra_compile_args=["-O2", *_extra],
            extra_link_args=_extra,
            optional=True,
        ),
        # The parsed-event walk's twin (dialects/_parsed.py), built and skipped alike.
        Extension(
            "sse_toolcalls._walk_c",
            sources=["sse_toolcalls/_walk_c.c"],
            extra_compile_args=["-O2", *_extra],
            extra_link_args=_extra,
            optional=True,
        ),
    ],
    cmdclass={"build_ext": _OptionalBuildExt},
)
