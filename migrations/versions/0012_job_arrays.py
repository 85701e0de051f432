"""Job arrays: each task is a job that carries its array's id and its index.

``berth submit --array 0-99`` makes one job per task; the array's id is its first
task's job id (``BERTH_ARRAY_JOB_ID``), the index ``BERTH_ARRAY_TASK_ID``. The index on
``array_job_id`` finds an array's tasks. NULL: a job that is not an array's task.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("array_job_id", sa.BigInteger))
    op.add_column("jobs", sa.Column("array_task_id", sa.Integer))
    op.create_index("ix_jobs_array_job_id", "jobs", ["array_job_id"])


def downgrade() -> None:
    op.drop_index("ix_jobs_array_job_id", table_name="jobs")
    with op.batch_alter_table("jobs") as batch:  # SQLite rebuilds the table
        batch.drop_column("array_task_id")
        batch.drop_column("array_job_id")
