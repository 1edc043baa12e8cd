"""Projects join the change feed: triggers on ``projects`` append ``project_changed`` entries.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26

A project created, edited (name, colour, instructions, context) or deleted by any
writer appends one ``change_log`` entry of kind ``project_changed``, so every
window follows another instance's project edits through the feed it already
reads, instead of reading the whole project list on a timer.

The entry's ``session_id`` column holds the *project's* id: the column is a plain
text key (no foreign key, same length as ``projects.id``), and its meaning is set
by ``kind``; readers never look a ``project_changed`` id up among the sessions
(``threadline.store.change_feed``). ``message_id`` is NULL. The project list is
small and read whole, so the entry only says *that* projects changed.

Deleting a project also clears ``sessions.project_id`` in the same transaction;
those sessions log their own ``session_changed`` entries (migration 0006).

On PostgreSQL the trigger goes through the feed's ``threadline_change_append`` (a
deferred constraint trigger), so the entry is ordered and notified like every other.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SQLITE_NOW = "strftime('%Y-%m-%d %H:%M:%f000', 'now')"


def _sqlite_log(project: str) -> str:
    return (
        "INSERT INTO change_log (at, kind, session_id, message_id) "
        f"VALUES ({_SQLITE_NOW}, 'project_changed', {project}, NULL);"
    )


SQLITE_TRIGGERS = {
    "change_log_project_insert": f"""
        CREATE TRIGGER change_log_project_insert AFTER INSERT ON projects BEGIN
            {_sqlite_log("new.id")}
        END""",
    "change_log_project_update": f"""
        CREATE TRIGGER change_log_project_update AFTER UPDATE ON projects BEGIN
            {_sqlite_log("new.id")}
        END""",
    "change_log_project_delete": f"""
        CREATE TRIGGER change_log_project_delete AFTER DELETE ON projects BEGIN
            {_sqlite_log("old.id")}
        END""",
}

_PG_PROJECT = """
CREATE FUNCTION threadline_project_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM threadline_change_append('project_changed', OLD.id, NULL);
    ELSE
        PERFORM threadline_change_append('project_changed', NEW.id, NULL);
    END IF;
    RETURN NULL;
END $$"""

POSTGRES_STATEMENTS = [
    _PG_PROJECT,
    "CREATE CONSTRAINT TRIGGER change_log_projects AFTER INSERT OR UPDATE OR DELETE ON projects "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION threadline_project_changed()",
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
        op.execute("DROP TRIGGER IF EXISTS change_log_projects ON projects")
        op.execute("DROP FUNCTION IF EXISTS threadline_project_changed()")
    op.execute("DELETE FROM change_log WHERE kind = 'project_changed'")  # older readers know no such kind
