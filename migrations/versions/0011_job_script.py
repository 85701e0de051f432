"""A batch script run as the job, and its arguments.

``berth submit job.sh [args...]`` sends the script itself; the daemon keeps it with the
job and hands it to the node that runs the job, which runs it with its arguments.
NULL: the job runs its ``command`` (or nothing, on emulated nodes).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("script", sa.Text))
    op.add_column("jobs", sa.Column("argv", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:  # SQLite rebuilds the table
        batch.drop_column("argv")
        batch.drop_column("script")
