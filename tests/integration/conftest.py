"""Real parts for integration tests: a PostgreSQL server (pgserver), daemon processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.http import http
from tests.support.postgres import stop_postgresql

OPERATOR, ALICE, BOB = "op-token", "alice-token", "bob-token"
#: A user whose jobs a root node agent can run: ``nobody`` has a local account everywhere.
RUNNER = "runner-token"
TOKENS = f"{OPERATOR}:admin:operator,{ALICE}:alice:user,{BOB}:bob:user,{RUNNER}:nobody:user"


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real PostgreSQL, started without root by the ``pgserver`` package."""
    os.environ.setdefault("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("xdg")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about the runtime dir
        import pgserver

        server = pgserver.get_server(tmp_path_factory.mktemp("pg"), cleanup_mode="stop")  # type: ignore[attr-defined]
    try:
        yield server.get_uri()
    finally:
        stop_postgresql(server)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database of each kind: a SQLite file, and one on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'berth.db'}"
    url: str = request.getfixturevalue("pg_database")
    return url


@pytest.fixture
def pg_database(pg_url: str) -> Iterator[str]:
    """A fresh, empty database on the session's PostgreSQL server."""
    import sqlalchemy as sa

    name = f"berth_{os.getpid()}_{time.monotonic_ns()}"
    admin = sa.create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://"),
                             isolation_level="AUTOCOMMIT")  # fmt: skip
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    base, _, query = pg_url.partition("?")
    yield f"{base.rsplit('/', 1)[0]}/{name}?{query}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    admin.dispose()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class DaemonProcess:
    """``berth serve`` in a subprocess on a loopback port."""

    def __init__(self, data_dir: Path, *extra: str, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data_dir / f"daemon-{self.port}.log"
        nodes = () if "--agents" in extra else ("--nodes", "4x cpus=8,mem_gb=32")
        command = [sys.executable, "-m", "berth.runtime.main", "serve", "--port", str(self.port),
                   "--data-dir", str(data_dir), "--tokens", TOKENS, "--log-level", "warning",
                   *nodes, *extra]  # fmt: skip
        with self.log.open("a") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        self.wait_ready()

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daemon exited: {self.log.read_text()}")
            try:
                if http().get(f"{self.url}/healthz", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"daemon not ready in {timeout} s: {self.log.read_text()}")

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: no shutdown hook runs
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    """A conservative daemon on 4 emulated nodes of 8 cpus (a module may define its own)."""
    process = DaemonProcess(tmp_path)
    yield process
    process.stop()
