"""Jobs remember the slots they asked for (node-shaped requests).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Nullable: a job given as totals (every job before this revision) has no shape.
    op.add_column("jobs", sa.Column("shape", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:  # SQLite rebuilds the table
        batch.drop_column("shape")
