"""Durable events: every job and node event, numbered, committed with its change.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("time", sa.BigInteger, nullable=False),
        sa.Column("job_id", sa.BigInteger),
        sa.Column("node", sa.String(100)),
        sa.Column("user", sa.String(100)),
        sa.Column("detail", sa.JSON, nullable=False),
        sa.Column("recorded_at", sa.Float, nullable=False),
    )
    op.create_index("ix_events_recorded_at", "events", ["recorded_at"])


def downgrade() -> None:
    op.drop_index("ix_events_recorded_at", "events")
    op.drop_table("events")
