"""A throwaway PostgreSQL cluster for the tests: ``initdb`` and ``pg_ctl`` from the OS
packages, run as an unprivileged user when we are root (the server refuses root),
listening on a unix socket in the cluster's folder only (no TCP port to collide on).

Missing binaries or psycopg skip the tests that need the server, except when
``SSE_TOOLCALLS_REQUIRE_POSTGRES=1`` (CI sets it): then they fail, so a CI machine
without PostgreSQL can never pass by skipping them.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

__all__ = ["REQUIRE_ENV", "PgServer", "find_bin", "missing_reason"]

REQUIRE_ENV = "SSE_TOOLCALLS_REQUIRE_POSTGRES"
BIN_ENV = "SSE_TOOLCALLS_PG_BIN"
UNPRIVILEGED = "nobody"


def find_bin() -> Path | None:
    """The folder with ``initdb`` and ``pg_ctl``: ``$SSE_TOOLCALLS_PG_BIN``, else the
    newest ``/usr/lib/postgresql/*/bin``, else ``PATH``."""
    given = os.environ.get(BIN_ENV)
    if given:
        return Path(given)
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
    )
    if versions:
        return Path(versions[-1])
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def missing_reason() -> str | None:
    """Why the server cannot be started here, or ``None``."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg and psycopg_pool are not installed (the postgres extra)"
    folder = find_bin()
    if folder is None or not (folder / "initdb").exists():
        return "PostgreSQL's initdb was not found (apt-get install postgresql)"
    return None


class PgServer:
    """One cluster in ``root``; :meth:`start`, :meth:`dsn`, :meth:`stop`."""

    def __init__(self, root: Path | None = None, *, durable: bool = False) -> None:
        # Its own folder right under the system's temporary one by default: the server's
        # user must traverse every parent, and pytest resets its own base folder to 0700
        # at each session's start, which cut a running cluster off from its files.
        self.owned = root is None
        self.root = Path(tempfile.mkdtemp(prefix="sse_pg_")) if root is None else root
        self.durable = durable
        self.data = self.root / "data"
        self.socket = self.root  # short: a unix socket path is limited to 107 bytes
        self.bin = find_bin()
        self.user = UNPRIVILEGED if os.geteuid() == 0 else None

    def _run(self, *argv: str, timeout: float = 120) -> None:
        assert self.bin is not None
        command = [str(self.bin / argv[0]), *argv[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr[-2000:]}")

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        if self.user is not None:
            shutil.chown(self.root, self.user)
        self._run("initdb", "-D", str(self.data), "-U", "sse", "-A", "trust", "-E", "UTF8")
        options = (
            f"-c listen_addresses='' -c unix_socket_directories='{self.socket}' "
            "-c max_connections=200"
        )
        if not self.durable:
            # A throwaway cluster for tests: durability is not under test (the clients'
            # crashes are), and fsync on a shared, loaded disk made commits cost 10-40 ms.
            # The benchmark keeps the defaults (durable=True), as SQLite keeps FULL.
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-o", options,
            "-w", "-t", "60", "start",
        )  # fmt: skip

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host={self.socket} user=sse dbname={dbname}"

    def create_database(self) -> str:
        """A fresh, empty database's DSN."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.dsn(name)

    def stop(self) -> None:
        try:
            if self.data.exists():
                self._run(
                    "pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60
                )
        finally:
            if self.owned:
                shutil.rmtree(self.root, ignore_errors=True)
