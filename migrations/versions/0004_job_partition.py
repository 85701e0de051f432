"""Partitions: the partition a job runs in, its gang block, and time spent suspended.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

COLUMNS = ("partition", "gang_offset", "suspended_at", "suspended_for")


def upgrade() -> None:
    # Jobs from before this revision ran in the default partition (NULL), never suspended.
    op.add_column("jobs", sa.Column("partition", sa.String(100)))
    op.add_column("jobs", sa.Column("gang_offset", sa.Integer))
    op.add_column("jobs", sa.Column("suspended_at", sa.BigInteger))
    op.add_column(
        "jobs", sa.Column("suspended_for", sa.BigInteger, nullable=False, server_default="0")
    )


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:  # SQLite rebuilds the table
        for column in COLUMNS:
            batch.drop_column(column)
