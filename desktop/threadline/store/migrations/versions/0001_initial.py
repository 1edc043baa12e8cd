"""The first schema: sessions, messages with a full-text index, agents, providers, settings, UI state.

Revision ID: 0001
Revises:
Create Date: 2025-01-01

The full-text index differs per backend: an FTS5 external-content table kept in
sync by triggers on SQLite (no second copy of the text), a stored generated
``search_vector`` column with a GIN index on PostgreSQL (stored, so matching rows
never have their text re-parsed while a query filters or rechecks them). Other backends get none and
search falls back to a plain scan.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from threadline.store.coltypes import JSONValue, UTCDateTime

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_FTS = [
    """
    CREATE VIRTUAL TABLE messages_fts USING fts5(
        text, content='messages', content_rowid='seq', tokenize='unicode61 remove_diacritics 2',
        prefix='2 3'
    )
    """,
    """
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts(rowid, text) VALUES (new.seq, new.text);
    END
    """,
    """
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.seq, old.text);
    END
    """,
    """
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.seq, old.text);
        INSERT INTO messages_fts(rowid, text) VALUES (new.seq, new.text);
    END
    """,
]

POSTGRES_FTS = [
    "ALTER TABLE messages ADD COLUMN search_vector tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, text)) STORED",
    "CREATE INDEX ix_messages_fts ON messages USING GIN (search_vector)",
]


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("title_set_by_user", sa.Boolean(), nullable=False),
        sa.Column("pinned", sa.Boolean(), nullable=False),
        sa.Column("archived", sa.Boolean(), nullable=False),
        sa.Column("folder", sa.String(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("provider", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("active_leaf", sa.String(64), nullable=True),
        sa.Column("preview", sa.String(), nullable=False),
        sa.Column("checkpoints", JSONValue, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("summary", sa.String(), nullable=False),
    )
    op.create_index("ix_sessions_list", "sessions", ["archived", "pinned", "updated_at", "id"])

    op.create_table(
        "messages",
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(64), nullable=False, unique=True),
        sa.Column(
            "session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("parent_id", sa.String(64), nullable=True),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("text", sa.String(), nullable=False),
        sa.Column("content", JSONValue, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("metadata", JSONValue, nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("session_id", "ordinal", name="uq_messages_session_ordinal"),
    )
    op.create_index(
        "ix_messages_streaming",
        "messages",
        ["status"],
        sqlite_where=sa.text("status = 'streaming'"),
        postgresql_where=sa.text("status = 'streaming'"),
    )

    op.create_table(
        "agents",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("system_prompt", sa.String(), nullable=False),
        sa.Column("provider", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("temperature", sa.Float(), nullable=True),
        sa.Column("max_tokens", sa.Integer(), nullable=True),
        sa.Column("enabled_tools", JSONValue, nullable=False),
        sa.Column("approval_rules", JSONValue, nullable=False),
        sa.Column("allowed_folders", JSONValue, nullable=False),
        sa.Column("default_approval", sa.String(16), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "providers",
        sa.Column("name", sa.String(128), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("base_url", sa.String(), nullable=False),
        sa.Column("api_key_env", sa.String(), nullable=False),
        sa.Column("default_model", sa.String(), nullable=False),
        sa.Column("headers", JSONValue, nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
    )
    for name in ("settings", "ui_state"):
        op.create_table(
            name,
            sa.Column("key", sa.String(255), primary_key=True),
            sa.Column("value", JSONValue, nullable=True),
        )

    dialect = op.get_bind().dialect.name
    for statement in SQLITE_FTS if dialect == "sqlite" else POSTGRES_FTS if dialect == "postgresql" else []:
        op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for trigger in ("messages_fts_insert", "messages_fts_delete", "messages_fts_update"):
            op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        op.execute("DROP TABLE IF EXISTS messages_fts")
    for table in ("ui_state", "settings", "providers", "agents", "messages", "sessions"):
        op.drop_table(table)
