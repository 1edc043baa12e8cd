"""Full-text search finds words in a reply's thinking too.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24

A reply's reasoning ("thinking") is stored apart from its text, in the message's
``content`` JSON (``content.reasoning[*].text``), so the index built on ``text``
did not see it.

* SQLite: a second, *contentless* FTS5 table ``reasoning_fts`` (rowid = ``seq``),
  kept by triggers that join the reasoning blocks' text. Contentless, because the
  messages table has no column holding that text for an external-content table to
  read; the triggers therefore delete with the old text, computed the same way.
  ``messages_fts`` is left exactly as it was (its integrity check compares it with
  ``messages.text``).
* PostgreSQL: the stored ``search_vector`` column is generated from the text and
  the reasoning blocks' text together (dropped and added again, with its index).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def reasoning_text(row: str) -> str:
    """SQL for the reasoning blocks' text of ``row`` (``new``, ``old`` or a table), one per line."""
    return (
        f"(SELECT group_concat(json_extract(value, '$.text'), char(10)) "
        f"FROM json_each({row}.content, '$.reasoning'))"
    )


def has_reasoning(row: str) -> str:
    return f"json_type({row}.content, '$.reasoning') = 'array'"


SQLITE_REASONING_FTS = [
    """
    CREATE VIRTUAL TABLE reasoning_fts USING fts5(
        reasoning, content='', tokenize='unicode61 remove_diacritics 2', prefix='2 3'
    )
    """,
    f"""
    CREATE TRIGGER reasoning_fts_insert AFTER INSERT ON messages WHEN {has_reasoning("new")} BEGIN
        INSERT INTO reasoning_fts(rowid, reasoning) VALUES (new.seq, {reasoning_text("new")});
    END
    """,
    f"""
    CREATE TRIGGER reasoning_fts_delete AFTER DELETE ON messages WHEN {has_reasoning("old")} BEGIN
        INSERT INTO reasoning_fts(reasoning_fts, rowid, reasoning)
            VALUES ('delete', old.seq, {reasoning_text("old")});
    END
    """,
    f"""
    CREATE TRIGGER reasoning_fts_update AFTER UPDATE OF content ON messages BEGIN
        INSERT INTO reasoning_fts(reasoning_fts, rowid, reasoning)
            SELECT 'delete', old.seq, {reasoning_text("old")} WHERE {has_reasoning("old")};
        INSERT INTO reasoning_fts(rowid, reasoning)
            SELECT new.seq, {reasoning_text("new")} WHERE {has_reasoning("new")};
    END
    """,
    f"""
    INSERT INTO reasoning_fts(rowid, reasoning)
        SELECT seq, {reasoning_text("messages")} FROM messages WHERE {has_reasoning("messages")}
    """,
]

POSTGRES_VECTOR = (
    "to_tsvector('simple'::regconfig, text || ' ' || "
    "coalesce(jsonb_path_query_array(content, '$.reasoning[*].text')::text, ''))"
)
POSTGRES_TEXT_ONLY = "to_tsvector('simple'::regconfig, text)"


def _postgres_vector(expression: str) -> list[str]:
    return [
        "DROP INDEX IF EXISTS ix_messages_fts",
        "ALTER TABLE messages DROP COLUMN IF EXISTS search_vector",
        f"ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ({expression}) STORED",
        "CREATE INDEX ix_messages_fts ON messages USING GIN (search_vector)",
    ]


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in SQLITE_REASONING_FTS:
            op.execute(statement)
    elif dialect == "postgresql":
        for statement in _postgres_vector(POSTGRES_VECTOR):
            op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for trigger in ("reasoning_fts_insert", "reasoning_fts_delete", "reasoning_fts_update"):
            op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        op.execute("DROP TABLE IF EXISTS reasoning_fts")
    elif dialect == "postgresql":
        for statement in _postgres_vector(POSTGRES_TEXT_ONLY):
            op.execute(statement)
