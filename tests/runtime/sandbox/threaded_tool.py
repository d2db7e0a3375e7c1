"""A tool whose module starts a thread at import: it cannot be kept warm (a fork keeps
only the forking thread), so a pool runs it cold."""

from __future__ import annotations

import threading

_WAKE = threading.Event()
threading.Thread(target=_WAKE.wait, daemon=True, name="import-time thread").start()


def echo(word: str) -> str:
    return word
