"""Where a waiting job's reservation is held: its planned nodes (slots per node).

Every policy plans on named nodes, and a placement is part of a promise: a restart
must put each waiting job back on the nodes it was planned on (another placement at the
same start could take nodes a later job was promised). NULL: none recorded (a job from
before this revision, or one the plan holds no nodes for); such a job is placed at its
planned start wherever it fits, as before.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("planned_nodes", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:  # SQLite rebuilds the table
        batch.drop_column("planned_nodes")
