"""Jobs run on node agents: where they run and write, requeue, and how they ended.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

COLUMNS = ("chdir", "output", "error", "requeue", "exit_code", "exit_signal", "launched_at",
           "requeued")  # fmt: skip


def upgrade() -> None:
    # Nullable or defaulted: jobs from before this revision ran on emulated nodes.
    op.add_column("jobs", sa.Column("chdir", sa.Text))
    op.add_column("jobs", sa.Column("output", sa.Text))
    op.add_column("jobs", sa.Column("error", sa.Text))
    op.add_column(
        "jobs", sa.Column("requeue", sa.Boolean, nullable=False, server_default=sa.false())
    )
    op.add_column("jobs", sa.Column("exit_code", sa.Integer))
    op.add_column("jobs", sa.Column("exit_signal", sa.Integer))
    op.add_column("jobs", sa.Column("launched_at", sa.Float))
    op.add_column("jobs", sa.Column("requeued", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:  # SQLite rebuilds the table
        for column in COLUMNS:
            batch.drop_column(column)
