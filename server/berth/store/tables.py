"""The database schema: the tables the migrations create, and engines for them.

Four tables hold the cluster (``jobs``, ``nodes``, ``config``, ``events``), one the
leader's lease (``leader``, high availability only), and two the identity: the tokens
the daemons issued, with their revocations (``tokens``), and the public keys tokens
are checked against (``token_keys``). Alembic's migrations create and
upgrade them (``migrations/``); these definitions are what the store's statements and
the lease are written against, so they must say what the newest migration leaves.
:func:`create_db_engine` opens a database with the settings Berth relies on (SQLite in
WAL mode, ``synchronous`` as configured; PostgreSQL through psycopg 3).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

METADATA = sa.MetaData()

#: States of jobs that are not finished: always loaded at start-up.
LIVE_STATES = ("PENDING", "HELD", "RUNNING")

JOBS = sa.Table(
    "jobs",
    METADATA,
    sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("user", sa.String(100), nullable=False, index=True),
    sa.Column("resources", sa.JSON, nullable=False),
    sa.Column("time_limit", sa.BigInteger, nullable=False),
    sa.Column("submit_time", sa.BigInteger, nullable=False),
    sa.Column("state", sa.String(16), nullable=False, index=True),
    sa.Column("state_reason", sa.Text, nullable=False),
    sa.Column("deadline", sa.BigInteger),
    sa.Column("priority", sa.Float),
    sa.Column("political_priority", sa.Float),
    sa.Column("command", sa.Text),
    sa.Column("emulated_runtime", sa.BigInteger),
    sa.Column("idempotency_key", sa.String(200)),
    sa.Column("start_time", sa.BigInteger),
    sa.Column("end_time", sa.BigInteger, index=True),  # usage over a period (migration 0008)
    sa.Column("guaranteed_start", sa.BigInteger),
    sa.Column("guaranteed_end", sa.BigInteger),
    sa.Column("planned_start", sa.BigInteger),
    sa.Column("allocation", sa.JSON, nullable=False),
    sa.Column("shape", sa.JSON),  # slots asked for explicitly (migration 0002)
    # Launching on node agents, and how the command ended (migration 0003).
    sa.Column("chdir", sa.Text),
    sa.Column("output", sa.Text),
    sa.Column("error", sa.Text),
    sa.Column("requeue", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("exit_code", sa.Integer),
    sa.Column("exit_signal", sa.Integer),
    sa.Column("launched_at", sa.Float),
    sa.Column("requeued", sa.Integer, nullable=False, server_default="0"),
    # Partitions and gang scheduling (migration 0004).
    sa.Column("partition", sa.String(100)),
    sa.Column("gang_offset", sa.Integer),
    sa.Column("suspended_at", sa.BigInteger),
    sa.Column("suspended_for", sa.BigInteger, nullable=False, server_default="0"),
    # The account charged (migration 0008, which set it to the user's name on older jobs).
    sa.Column("account", sa.String(100), index=True),
    # Where a waiting job's reservation is held (migration 0009).
    sa.Column("planned_nodes", sa.JSON),
    # What the job used, as its node measured it (migration 0010).
    sa.Column("usage", sa.JSON),
    # A batch script run as the job, and its arguments (migration 0011).
    sa.Column("script", sa.Text),
    sa.Column("argv", sa.JSON),
    # A task of a job array: its array's id and its index (migration 0012).
    sa.Column("array_job_id", sa.BigInteger, index=True),
    sa.Column("array_task_id", sa.Integer),
    # What it waits for: as written, as resolved, and what an unsatisfiable need does
    # (migration 0013).
    sa.Column("dependency", sa.Text),
    sa.Column("needs", sa.Text),
    sa.Column("kill_on_invalid_dep", sa.Boolean, nullable=False, server_default=sa.true()),
    # Start no earlier than this: sbatch --begin (migration 0015).
    sa.Column("begin_time", sa.BigInteger),
    # Who holds a held job: "user" or "admin" (migration 0016).
    sa.Column("hold", sa.String(8)),
    sa.UniqueConstraint("user", "idempotency_key", name="uq_jobs_user_idempotency_key"),
)

NODES = sa.Table(
    "nodes",
    METADATA,
    sa.Column("name", sa.String(100), primary_key=True),
    sa.Column("resources", sa.JSON, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
)

EVENTS = sa.Table(
    "events",
    METADATA,
    sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("time", sa.BigInteger, nullable=False),
    sa.Column("job_id", sa.BigInteger, index=True),
    sa.Column("node", sa.String(100)),
    sa.Column("user", sa.String(100)),  # the job's owner: whom a user's stream shows it to
    sa.Column("detail", sa.JSON, nullable=False),
    sa.Column("recorded_at", sa.Float, nullable=False, index=True),  # wall time, for pruning
)

#: High availability: the leader's lease and fencing epoch (one row; see ``lease.py``).
LEADER = sa.Table(
    "leader",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("holder", sa.String(200), nullable=False),
    sa.Column("url", sa.String(500), nullable=False),
    sa.Column("epoch", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
)

CONFIG = sa.Table(
    "config",
    METADATA,
    sa.Column("key", sa.String(100), primary_key=True),
    sa.Column("value", sa.JSON, nullable=False),
)

#: Tokens a daemon issued (``berth admin token issue``, node tokens): never the token
#: itself, only what it says and whether it was revoked.
TOKENS = sa.Table(
    "tokens",
    METADATA,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("user", sa.String(100), nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("account", sa.String(100)),
    sa.Column("issuer", sa.String(200), nullable=False),
    sa.Column("issued_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False, index=True),
    sa.Column("issued_by", sa.String(100), nullable=False),
    sa.Column("revoked_at", sa.BigInteger),
    sa.Column("revoked_by", sa.String(100)),
)

#: Public keys whose tokens the daemons accept: each daemon's own (every daemon of an
#: HA group accepts what another signed), and the login nodes' ``berth authd`` keys.
TOKEN_KEYS = sa.Table(
    "token_keys",
    METADATA,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("public_key", sa.Text, nullable=False),
    sa.Column("source", sa.String(16), nullable=False),  # "daemon" or "authd"
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("added_at", sa.BigInteger, nullable=False),
)


def create_db_engine(url: str, sqlite_synchronous: str = "FULL") -> Engine:
    """An engine for ``url``; ``postgresql://`` URLs use psycopg 3; a SQLite file's
    folder is created if missing."""
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    if not url.startswith("sqlite"):
        return sa.create_engine(url, pool_pre_ping=True)
    if url.startswith("sqlite:///"):  # a file: make its folder, as an embedded default should
        Path(url[len("sqlite:///") :]).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, connect_args={"check_same_thread": False})

    @sa.event.listens_for(engine, "connect")
    def _pragmas(connection: Any, _record: Any) -> None:
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA synchronous={sqlite_synchronous}")
        cursor.execute("PRAGMA busy_timeout=5000")
        cursor.close()

    return engine
