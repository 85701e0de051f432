"""Job dependencies: what a job waits for, as its user wrote it and as resolved.

``dependency`` is the user's text (``afterok:12:13,singleton``), shown back as given;
``needs`` what the job still waits for, resolved (arrays expanded, ``singleton`` as
``afterany`` needs, an array's ``%N`` limit as ``throttle`` needs:
``afterok:12,throttle:14``), kept as they are satisfied, from which a restarted daemon
rebuilds who waits for whom; ``kill_on_invalid_dep`` whether a need that can never be
satisfied cancels the job (true) or holds it. NULL: no dependency (left).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("dependency", sa.Text))
    op.add_column("jobs", sa.Column("needs", sa.Text))
    op.add_column(
        "jobs",
        sa.Column("kill_on_invalid_dep", sa.Boolean, nullable=False, server_default=sa.true()),
    )


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:  # SQLite rebuilds the table
        batch.drop_column("kill_on_invalid_dep")
        batch.drop_column("needs")
        batch.drop_column("dependency")
