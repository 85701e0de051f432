"""Events are looked up by job (a job's page shows its history): index ``job_id``.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_events_job_id", "events", ["job_id"])


def downgrade() -> None:
    op.drop_index("ix_events_job_id", table_name="events")
