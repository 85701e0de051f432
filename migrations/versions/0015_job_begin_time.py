"""A job's begin time: it starts no earlier than this (sbatch ``--begin``). NULL: as soon
as it can (left).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("begin_time", sa.BigInteger))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:  # SQLite rebuilds the table
        batch.drop_column("begin_time")
