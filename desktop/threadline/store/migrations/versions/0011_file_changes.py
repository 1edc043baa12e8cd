"""What tools changed on disk: ``change_sets`` and their ``file_changes``.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-29

One ``change_sets`` row per tool call that changed files in the allowed folders (or per
restore), one ``file_changes`` row per file it changed, in order (docs/workspace.md).
Paths are ``LargeBinary``: the bytes ``os.fsencode`` gives, so a file name that is not
UTF-8 is kept exactly (a text column would have its surrogate escapes scrubbed by
``store/encodable.py`` and the file could not be found again). The contents themselves
are not here: they stay in the snapshot store of the computer named by ``machine``.

Both tables go with their session (``ON DELETE CASCADE``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _state(prefix: str) -> list[sa.Column[object]]:
    return [
        sa.Column(f"{prefix}_digest", sa.String(length=64), nullable=False, server_default=""),
        sa.Column(f"{prefix}_size", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column(f"{prefix}_kept", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column(f"{prefix}_binary", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column(f"{prefix}_not_kept", sa.Text(), nullable=False, server_default=""),
        sa.Column(f"{prefix}_unknown", sa.Boolean(), nullable=False, server_default=sa.false()),
    ]


def upgrade() -> None:
    op.create_table(
        "change_sets",
        sa.Column("id", sa.String(length=64), primary_key=True),
        sa.Column(
            "session_id",
            sa.String(length=64),
            sa.ForeignKey("sessions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("machine", sa.String(length=64), nullable=False),
        sa.Column("message_id", sa.String(length=64), nullable=False, server_default=""),
        sa.Column("call_id", sa.String(length=200), nullable=False, server_default=""),
        sa.Column("tool_name", sa.String(length=200), nullable=False, server_default=""),
        sa.Column("note", sa.Text(), nullable=False, server_default=""),
        sa.Column("skipped", sa.Text(), nullable=False, server_default=""),
    )
    op.create_index("ix_change_sets_session_id", "change_sets", ["session_id", "created_at"])
    op.create_table(
        "file_changes",
        sa.Column(
            "change_set_id",
            sa.String(length=64),
            sa.ForeignKey("change_sets.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("path", sa.LargeBinary(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("renamed_from", sa.LargeBinary(), nullable=True),
        sa.Column("added", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("removed", sa.Integer(), nullable=False, server_default="0"),
        *_state("before"),
        *_state("after"),
    )


def downgrade() -> None:
    op.drop_table("file_changes")
    op.drop_index("ix_change_sets_session_id", table_name="change_sets")
    op.drop_table("change_sets")
