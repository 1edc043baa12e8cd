"""Streaming replies record their writer and a heartbeat (two instances on one database).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21

See ``threadline.store.writers``: with these columns, a store that opens no
longer marks ``interrupted`` a reply another live instance is still streaming.
Existing rows get NULL, which counts as "left behind", as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from threadline.store.coltypes import UTCDateTime

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ALTER TABLE ADD COLUMN on every backend: no table rebuild, so SQLite's
    # full-text index (keyed on ``seq``) and its triggers are untouched.
    op.add_column("messages", sa.Column("writer", sa.String(length=200), nullable=True))
    op.add_column("messages", sa.Column("heartbeat_at", UTCDateTime(), nullable=True))


def downgrade() -> None:
    op.drop_column("messages", "heartbeat_at")
    op.drop_column("messages", "writer")
