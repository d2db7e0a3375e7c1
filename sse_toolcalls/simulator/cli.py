"""``sse-toolcalls serve``: the simulator in the foreground, for demos and manual tests."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import TextIO

from .script import default_demo_script, load_script
from .server import Simulator


def serve(
    port: int = 0,
    script_file: str | Path | None = None,
    *,
    out: TextIO | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Serve a script on ``127.0.0.1:port`` until interrupted (Ctrl-C) or ``stop`` is set.

    Args:
        port: the port; 0 picks a free one (printed).
        script_file: a JSON script (see :mod:`.script`); ``None`` plays the demo script.
        out: where the URLs are printed (default: standard output).
        stop: an event that ends serving when set (for embedding and tests).

    Returns:
        The exit status: 0.

    Raises:
        UsageError: the script file is invalid, or the port cannot be bound.
    """
    script = default_demo_script() if script_file is None else load_script(script_file)
    stream = out or sys.stdout
    done = stop or threading.Event()
    with Simulator(script, port=port) as sim:
        print(f"simulator listening on {sim.base_url} ({len(script.turns)} turns)", file=stream)
        for dialect in ("openai_chat", "openai_responses", "anthropic", "gemini"):
            print(f"  {dialect:<17} base URL {sim.base_url_for(dialect)}", file=stream)
        stream.flush()
        try:
            while not done.wait(0.2):
                pass
        except KeyboardInterrupt:
            pass
        for problem in sim.problems:
            print(f"problem: {problem}", file=stream)
    return 0


__all__ = ["serve"]
