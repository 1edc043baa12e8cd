"""One turn per session across instances: a ``session_leases`` table.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24

The instance running a turn in a session holds that session's lease: one row,
taken atomically before the turn's first write, refreshed by a heartbeat while
the turn runs, and deleted once the turn's writes are saved. Another instance
that finds a fresh lease is told where the session is busy and may set
``stop_requested``; a lease whose heartbeat stopped is taken over (see
``threadline.store.leases``).

A plain new table: no trigger, no rebuild of an existing table.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from threadline.store.coltypes import UTCDateTime

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "session_leases",
        sa.Column("session_id", sa.String(length=64), primary_key=True),
        sa.Column("holder", sa.String(length=200), nullable=False),
        sa.Column("host", sa.String(length=200), nullable=False),
        sa.Column("acquired_at", UTCDateTime(), nullable=False),
        sa.Column("heartbeat_at", UTCDateTime(), nullable=False),
        sa.Column("stop_requested", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    op.drop_table("session_leases")
