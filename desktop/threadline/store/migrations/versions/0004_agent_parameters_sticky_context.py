"""Agents gain top-p, sticky context and a context share; sessions gain their own sticky context.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23

``context`` (agents and sessions) is JSON: ``{"sources": [...], "hooks": [...]}``,
empty for none (see ``threadline.core.sticky``). ``context_share`` is the share of
the model's window sticky context may take; NULL means the app's default (75%).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from threadline.store.coltypes import JSONValue

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN (no table rebuild): the sessions table carries full-text triggers.
    op.add_column("agents", sa.Column("top_p", sa.Float(), nullable=True))
    op.add_column("agents", sa.Column("context", JSONValue, nullable=False, server_default="{}"))
    op.add_column("agents", sa.Column("context_share", sa.Float(), nullable=True))
    op.add_column("sessions", sa.Column("context", JSONValue, nullable=False, server_default="{}"))


def downgrade() -> None:
    op.drop_column("sessions", "context")
    op.drop_column("agents", "context_share")
    op.drop_column("agents", "context")
    op.drop_column("agents", "top_p")
