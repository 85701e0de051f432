"""What a job used, as its node measured it: CPU seconds, peak memory, GPUs.

A node agent reads each job's usage from its cgroup (or the kernel's account of its
processes) when it ends and reports it with the end; ``berth show`` prints it with the
job's efficiency and ``berth usage`` sums it. NULL: not measured (emulated nodes, or a
job from before this revision).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("usage", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:  # SQLite rebuilds the table
        batch.drop_column("usage")
