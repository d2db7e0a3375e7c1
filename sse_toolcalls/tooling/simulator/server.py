"""The simulator served for real: uvicorn on a loopback port, in a background thread
(:class:`~sse_toolcalls.tooling._loopback.LoopbackServer`, which the recording proxy shares), so
the same object works from sync tests and from async tests on asyncio or trio.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

import anyio.to_thread

from ..._faces import publish
from ...errors import UnknownDialectError, UsageError
from .._loopback import STARTUP_TIMEOUT_S, LoopbackServer
from .app import RecordedRequest, Restart, SimulatorApp
from .script import Script, Turn

SHUTDOWN_GRACE_S = 1
"""Seconds a stopping server lets open streams finish before cancelling them: a stall
fault would otherwise hold the test's teardown for its whole length."""

_DIALECT_PREFIX = {
    "openai_chat": "/v1",
    "openai_responses": "/v1",
    "anthropic": "",
    "gemini": "",
    # Bedrock Runtime's endpoint: the client adds /model/{modelId}/converse-stream (or
    # /invoke-with-response-stream).
    "bedrock_converse": "",
    "bedrock_anthropic": "",
}


class Simulator:
    """A scripted provider on ``http://127.0.0.1:<port>``, speaking every dialect.

    Use it as a context manager (sync or async)::

        with Simulator(Script(turns=(Turn(text="hi"),))) as sim:
            client = OpenAIChatClient(base_url=sim.base_url_for("openai_chat"), api_key="x")
            ...
            assert sim.problems == ()

    Requests are answered by the script's turns in arrival order, whatever the path; a
    failed check answers 400 (in the dialect's error shape, the problem in the message)
    and is listed in :attr:`problems`.
    """

    def __init__(
        self,
        script: Script | Sequence[Turn] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        restart: Restart = "never",
    ) -> None:
        """Args:
        script: the turns to play.
        host: the loopback address to listen on.
        port: the port; 0 picks a free one.
        restart: when the script starts again (:data:`~.app.Restart`): never by
            default, as a test wants; ``sse-toolcalls serve`` restarts it for each
            new conversation, or loops (``--loop``).
        """
        self._app = SimulatorApp(_as_script(script), restart=restart)
        self._host = host
        self._served = LoopbackServer(
            self._app, what="the simulator", host=host, port=port, grace=SHUTDOWN_GRACE_S
        )

    def __repr__(self) -> str:
        where = f"at {self.base_url}" if self._served.port is not None else "not running"
        return f"<Simulator {where}, {len(self.requests)} request(s) received>"

    # -- what tests read ---------------------------------------------------------

    @property
    def app(self) -> SimulatorApp:
        """The ASGI application (to host it under another server)."""
        return self._app

    @property
    def port(self) -> int:
        """The port the server listens on.

        Raises:
            UsageError: the server is not running.
        """
        port = self._served.port
        if port is None:
            raise UsageError("the simulator is not running; use it as a context manager")
        return port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``, without a path."""
        return f"http://{self._host}:{self.port}"

    def base_url_for(self, dialect: str) -> str:
        """The base URL a client of ``dialect`` expects: with ``/v1`` for the OpenAI
        dialects (as their SDKs and compatible servers use), the bare root otherwise."""
        try:
            prefix = _DIALECT_PREFIX[dialect]
        except KeyError:
            # Before the URL: a wrong name is the caller's error whether or not we run.
            raise UnknownDialectError(dialect, expected=tuple(_DIALECT_PREFIX)) from None
        return self.base_url + prefix

    @property
    def requests(self) -> tuple[RecordedRequest, ...]:
        """Every request received, parsed, in arrival order."""
        return self._app.requests

    @property
    def problems(self) -> tuple[str, ...]:
        """Every failed check on the requests, as readable sentences."""
        return self._app.problems

    def play(self, script: Script | Sequence[Turn], *, continuing: bool = False) -> None:
        """Start playing ``script`` from its first turn, forgetting earlier requests.

        ``continuing``: the script answers a later message of the same conversation,
        whose requests carry the earlier results; the ids of the calls issued before
        stay known, so those results are not reported as answering no call."""
        self._app.reset(_as_script(script), keep_ids=continuing)

    def assert_no_problems(self) -> None:
        """Raises:
        AssertionError: a request failed a check; the message lists every problem."""
        problems = self.problems
        if problems:
            raise AssertionError("the simulator found problems:\n- " + "\n- ".join(problems))

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> None:
        """Bind the port and start serving; returns once the server listens.

        Raises:
            UsageError: already running, or the server did not start in time.
        """
        self._served.start()

    def stop(self) -> None:
        """Stop serving and release the port (open streams get ``SHUTDOWN_GRACE_S``)."""
        self._served.stop()

    def __enter__(self) -> Simulator:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Simulator:
        await anyio.to_thread.run_sync(self.start)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await anyio.to_thread.run_sync(self.stop)


def _as_script(script: Script | Sequence[Turn]) -> Script:
    return script if isinstance(script, Script) else Script(turns=tuple(script))


__all__ = ["SHUTDOWN_GRACE_S", "STARTUP_TIMEOUT_S", "Simulator"]

# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
