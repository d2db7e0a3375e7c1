"""Rebuild ``recorded_streams/MANIFEST.json`` from the bodies and ``.expected.json`` files.

The manifest uses the entry format of the external corpus (``../shared/external_streams``),
so ``check_streams.py --streams recorded_streams`` can replay it. Byte counts, hashes, line
endings and the trailing blank line are computed from the bodies (``.sse``, or
``.eventstream`` for Amazon Bedrock, whose binary bodies have neither line endings nor
blank lines: ``null``, as in the external Bedrock corpus), never typed in, so the manifest
cannot drift from the files.

Usage, from the repository root::

    python recorded_streams/make_manifest.py           # rewrite MANIFEST.json
    python recorded_streams/make_manifest.py --check   # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "MANIFEST.json"
DIALECTS = (
    "openai_chat",
    "openai_responses",
    "anthropic",
    "gemini",
    "bedrock_converse",
    "bedrock_anthropic",
)
SUFFIXES = (".sse", ".eventstream")
"""The body files: server-sent events, and AWS's binary event stream."""


def line_endings(raw: bytes) -> str:
    """Name the line endings of a body: ``CRLF``, ``CR`` or ``LF``."""
    if b"\r\n" in raw:
        return "CRLF"
    if b"\r" in raw:
        return "CR"
    return "LF"


def ends_with_blank_line(raw: bytes) -> bool:
    """True when the body ends with an empty line, so its last event is dispatched."""
    return raw.endswith((b"\n\n", b"\r\n\r\n", b"\r\r"))


def entry(sse: Path) -> dict[str, Any]:
    """Build the manifest entry of one body file from it and its expected file."""
    raw = sse.read_bytes()
    binary = sse.suffix == ".eventstream"
    exp_path = sse.with_name(sse.stem + ".expected.json")
    exp = json.loads(exp_path.read_text(encoding="utf-8"))
    meta = exp["meta"]
    expected: dict[str, Any] = {"outcome": exp["outcome"], "calls": exp["calls"]}
    if "partial_calls" in exp:
        expected["partial_calls"] = exp["partial_calls"]
    return {
        "file": sse.relative_to(HERE).as_posix(),
        "provider": sse.parent.name,
        "vendor": meta["vendor"],
        "model": meta["model"],
        "source_repo": None,
        "source_path": None,
        "source_commit": None,
        "source_interaction_index": None,
        "source_url_or_issue": meta["source_url_or_issue"],
        "made_by": meta["made_by"],
        "reframed": False,
        "line_endings": None if binary else line_endings(raw),
        "ends_with_blank_line": None if binary else ends_with_blank_line(raw),
        "bytes": len(raw),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "notes": exp["notes"],
        "expected": expected,
    }


def build() -> list[dict[str, Any]]:
    """Return the manifest for every body file, by dialect then file name."""
    return [
        entry(body)
        for d in DIALECTS
        for body in sorted(p for p in (HERE / d).iterdir() if p.suffix in SUFFIXES)
    ]


def render() -> str:
    """Return the manifest text exactly as it is written to disk."""
    return json.dumps(build(), ensure_ascii=False, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` verify) the manifest; return the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only report whether it is current")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = MANIFEST.exists() and MANIFEST.read_text(encoding="utf-8") == text
        print("MANIFEST.json is current" if current else "MANIFEST.json is out of date")
        return 0 if current else 1
    MANIFEST.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
