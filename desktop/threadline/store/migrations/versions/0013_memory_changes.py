"""Memories join the change feed: triggers on ``memories`` append ``memory_changed`` entries.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29

A memory saved, edited or deleted by any writer (Settings → Memory, an accepted proposal
in a chat, ``threadline memory``, another machine) appends one ``change_log`` entry of kind
``memory_changed``, so every window shows the memories as they are now — in Settings →
Memory and in its context meters — without a restart, through the feed it already reads.

As for projects (migration 0009), the entry's ``session_id`` column holds the *memory's*
id (a plain text key of the same length), ``message_id`` is NULL, and readers never look
it up among the sessions: the list is small and read whole, so the entry only says *that*
memories changed. On PostgreSQL the trigger goes through ``threadline_change_append`` (a
deferred constraint trigger), ordered and notified like every other entry.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SQLITE_NOW = "strftime('%Y-%m-%d %H:%M:%f000', 'now')"


def _sqlite_log(memory: str) -> str:
    return (
        "INSERT INTO change_log (at, kind, session_id, message_id) "
        f"VALUES ({_SQLITE_NOW}, 'memory_changed', {memory}, NULL);"
    )


SQLITE_TRIGGERS = {
    "change_log_memory_insert": f"""
        CREATE TRIGGER change_log_memory_insert AFTER INSERT ON memories BEGIN
            {_sqlite_log("new.id")}
        END""",
    "change_log_memory_update": f"""
        CREATE TRIGGER change_log_memory_update AFTER UPDATE ON memories BEGIN
            {_sqlite_log("new.id")}
        END""",
    "change_log_memory_delete": f"""
        CREATE TRIGGER change_log_memory_delete AFTER DELETE ON memories BEGIN
            {_sqlite_log("old.id")}
        END""",
}

_PG_MEMORY = """
CREATE FUNCTION threadline_memory_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM threadline_change_append('memory_changed', OLD.id, NULL);
    ELSE
        PERFORM threadline_change_append('memory_changed', NEW.id, NULL);
    END IF;
    RETURN NULL;
END $$"""

POSTGRES_STATEMENTS = [
    _PG_MEMORY,
    "CREATE CONSTRAINT TRIGGER change_log_memories AFTER INSERT OR UPDATE OR DELETE ON memories "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION threadline_memory_changed()",
]


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in SQLITE_TRIGGERS.values():
            op.execute(statement)
    elif dialect == "postgresql":
        for statement in POSTGRES_STATEMENTS:
            op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for name in SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    elif dialect == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS change_log_memories ON memories")
        op.execute("DROP FUNCTION IF EXISTS threadline_memory_changed()")
    op.execute("DELETE FROM change_log WHERE kind = 'memory_changed'")  # older readers know no such kind
