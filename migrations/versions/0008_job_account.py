"""Accounts and usage by period: the account a job is charged to, and indexes on it and
on ``end_time`` (``GET /v1/usage`` finds the jobs that ended in a period by index, not by
reading every job ever run).

Jobs from before this revision are charged to their user's name, as new jobs that name
no account are.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("account", sa.String(100)))
    op.execute('UPDATE jobs SET account = "user"')
    op.create_index("ix_jobs_account", "jobs", ["account"])
    op.create_index("ix_jobs_end_time", "jobs", ["end_time"])


def downgrade() -> None:
    op.drop_index("ix_jobs_end_time", table_name="jobs")
    op.drop_index("ix_jobs_account", table_name="jobs")
    with op.batch_alter_table("jobs") as batch:  # SQLite rebuilds the table
        batch.drop_column("account")
