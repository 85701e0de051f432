"""Who holds a held job: "user" (its user, who may release it: sbatch ``--hold``,
``berth hold``) or "admin" (an operator or the account's coordinator, who alone may).
NULL: not held, or held before this column (released only by operators and
coordinators, as then).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-08
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("hold", sa.String(8)))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:  # SQLite rebuilds the table
        batch.drop_column("hold")
