"""``sse-toolcalls serve``: the simulator in the foreground, for demos and manual tests."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path
from typing import TextIO

from ...calls import DIALECTS
from .app import Restart
from .script import Script, default_demo_script, load_script
from .server import Simulator


class _RequestLine(logging.Formatter):
    """One line per request served: what a person watching ``serve`` needs."""

    def format(self, record: logging.LogRecord) -> str:
        fields = record.__dict__
        fault = fields.get("fault") or "none"
        turn = fields.get("turn")
        line = (
            f"{self.formatTime(record, '%H:%M:%S')} {fields.get('dialect') or '-'} "
            f"{fields.get('path')} -> {fields.get('status')}"
            f" turn {'-' if turn is None else turn + 1} fault {fault}"
        )
        return line if fields.get("completed", True) else line + " (client left early)"


def serve(
    port: int = 0,
    script_file: str | Path | None = None,
    *,
    out: TextIO | None = None,
    stop: threading.Event | None = None,
    loop: bool = False,
) -> int:
    """Serve a script on ``127.0.0.1:port`` until interrupted (Ctrl-C) or ``stop`` is set,
    printing one line per request (dialect, path, status, turn, fault applied).

    Each new conversation (a request with no assistant turn in it) gets the script from
    its first turn, so one client after another each gets the whole script; with
    ``loop`` the turns wrap around instead, whatever the requests.

    Args:
        port: the port; 0 picks a free one (printed).
        script_file: a JSON script (see :mod:`.script`); ``None`` plays the demo script.
        out: where the URLs and the request lines are printed (default: standard output).
        stop: an event that ends serving when set (for embedding and tests).
        loop: play the turns round and round instead of once per conversation.

    Returns:
        The exit status: 0.

    Raises:
        UsageError: the script file is invalid, or the port cannot be bound.
    """
    script = default_demo_script() if script_file is None else load_script(script_file)
    stream = out or sys.stdout
    done = stop or threading.Event()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_RequestLine())
    requests = logging.getLogger("sse_toolcalls.tooling.simulator")
    level = requests.level
    requests.addHandler(handler)
    requests.setLevel(logging.DEBUG)
    try:
        return _serve(script, port, stream, done, "loop" if loop else "conversation")
    finally:
        requests.removeHandler(handler)
        requests.setLevel(level)


def _serve(
    script: Script, port: int, stream: TextIO, done: threading.Event, restart: Restart
) -> int:
    with Simulator(script, port=port, restart=restart) as sim:
        how = "round and round" if restart == "loop" else "once per conversation"
        print(
            f"simulator listening on {sim.base_url} ({len(script.turns)} turns, {how})",
            file=stream,
        )
        for dialect in DIALECTS:
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
