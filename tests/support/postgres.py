"""A real PostgreSQL for benchmarks and chaos runs: ``pgserver`` (no root, no system
service) with one fresh database."""

from __future__ import annotations

import contextlib
import os
import warnings
from pathlib import Path
from typing import Any


def start_postgresql(folder: Path, database: str) -> tuple[str, Any]:
    """Start a server with its data in ``folder/pg`` and create ``database``; its URL and
    the server (:func:`stop_postgresql` stops it)."""
    import sqlalchemy as sa

    os.environ.setdefault("XDG_RUNTIME_DIR", str(folder))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about the runtime dir
        import pgserver

        server = pgserver.get_server(folder / "pg", cleanup_mode="stop")  # type: ignore[attr-defined]
    admin = sa.create_engine(server.get_uri().replace("postgresql://", "postgresql+psycopg://"),
                             isolation_level="AUTOCOMMIT")  # fmt: skip
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{database}"'))
    admin.dispose()
    base, _, query = server.get_uri().partition("?")
    return f"{base.rsplit('/', 1)[0]}/{database}?{query}", server


def stop_postgresql(server: Any) -> None:
    """Stop a server from :func:`start_postgresql`, also after it was restarted (a chaos
    run's ``pg_ctl restart``): pgserver's ``cleanup()`` stops only the postmaster it
    started itself, and would leave the new one running."""
    import subprocess

    import pgserver

    server.cleanup()
    if (Path(server.pgdata) / "postmaster.pid").exists():
        with contextlib.suppress(subprocess.CalledProcessError):  # it stopped meanwhile
            pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata,  # type: ignore[attr-defined]
                            user=server.system_user)  # fmt: skip
