"""Identity: the tokens the daemons issued, with their revocations, and the public keys
tokens are checked against.

``tokens`` keeps what an issued token says (user, role, account, issuer, when issued
and when it expires, by whom) and whether it was revoked (when, by whom), never the
token itself; every daemon of an HA group reads the revocations from here.
``token_keys`` keeps the public half of each daemon's signing key and of each login
node's ``berth authd`` key.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tokens",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("user", sa.String(100), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("account", sa.String(100)),
        sa.Column("issuer", sa.String(200), nullable=False),
        sa.Column("issued_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("issued_by", sa.String(100), nullable=False),
        sa.Column("revoked_at", sa.BigInteger),
        sa.Column("revoked_by", sa.String(100)),
    )
    op.create_index("ix_tokens_expires_at", "tokens", ["expires_at"])
    op.create_table(
        "token_keys",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("public_key", sa.Text, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("added_at", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("token_keys")
    op.drop_index("ix_tokens_expires_at", "tokens")
    op.drop_table("tokens")
