"""Initial schema: jobs, nodes, config.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("user", sa.String(100), nullable=False),
        sa.Column("resources", sa.JSON, nullable=False),
        sa.Column("time_limit", sa.BigInteger, nullable=False),
        sa.Column("submit_time", sa.BigInteger, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("state_reason", sa.Text, nullable=False),
        sa.Column("deadline", sa.BigInteger),
        sa.Column("priority", sa.Float),
        sa.Column("political_priority", sa.Float),
        sa.Column("command", sa.Text),
        sa.Column("emulated_runtime", sa.BigInteger),
        sa.Column("idempotency_key", sa.String(200)),
        sa.Column("start_time", sa.BigInteger),
        sa.Column("end_time", sa.BigInteger),
        sa.Column("guaranteed_start", sa.BigInteger),
        sa.Column("guaranteed_end", sa.BigInteger),
        sa.Column("planned_start", sa.BigInteger),
        sa.Column("allocation", sa.JSON, nullable=False),
        sa.UniqueConstraint("user", "idempotency_key", name="uq_jobs_user_idempotency_key"),
    )
    op.create_index("ix_jobs_user", "jobs", ["user"])
    op.create_index("ix_jobs_state", "jobs", ["state"])
    op.create_table(
        "nodes",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("resources", sa.JSON, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
    )
    op.create_table(
        "config",
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("value", sa.JSON, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("config")
    op.drop_table("nodes")
    op.drop_index("ix_jobs_state", table_name="jobs")
    op.drop_index("ix_jobs_user", table_name="jobs")
    op.drop_table("jobs")
