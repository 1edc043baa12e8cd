"""Saved memories: short facts the user keeps for the model (docs/memory.md).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-29

One row per memory: its text, its scope (``global``, ``project`` or ``agent``) and the
project's or agent's id for those (``target``, empty for a global one). No foreign key
on ``target``: it points at a project or an agent depending on ``scope``, which one key
cannot say; a memory whose project or agent is deleted stays listed and reaches no chat
(docs/memory.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from threadline.store.coltypes import UTCDateTime

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "memories",
        sa.Column("id", sa.String(length=64), primary_key=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False, server_default="global"),
        sa.Column("target", sa.String(length=64), nullable=False, server_default=""),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_memories_scope", "memories", ["scope", "target"])


def downgrade() -> None:
    op.drop_index("ix_memories_scope", table_name="memories")
    op.drop_table("memories")
