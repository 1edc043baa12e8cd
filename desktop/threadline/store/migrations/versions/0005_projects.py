"""Projects: named groups of chats with shared instructions and sticky context.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23

``sessions.project_id`` names the chat's project (NULL: none). It is a plain
column with an index, not a foreign key: SQLite adds a foreign key only by
rebuilding the table, and the sessions table carries full-text triggers that a
rebuild would drop. Deleting a project clears the column in the same transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from threadline.store.coltypes import JSONValue, UTCDateTime

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.String(length=64), primary_key=True),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("colour", sa.String(length=16), nullable=False),
        sa.Column("instructions", sa.String(), nullable=False),
        sa.Column("context", JSONValue, nullable=False, server_default="{}"),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
    )
    op.add_column("sessions", sa.Column("project_id", sa.String(length=64), nullable=True))
    op.create_index(
        "ix_sessions_project", "sessions", ["project_id", "archived", "pinned", "updated_at", "id"]
    )


def downgrade() -> None:
    op.drop_index("ix_sessions_project", table_name="sessions")
    op.drop_column("sessions", "project_id")
    op.drop_table("projects")
