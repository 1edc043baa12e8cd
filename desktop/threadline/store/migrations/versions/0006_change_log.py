"""The change feed: a ``change_log`` table filled by triggers on sessions and messages.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24

Every writer of the database — this app, ``threadline ask``, another machine on the
same server, an older copy of the app — goes through the database, so the
database itself records what changed: triggers on ``sessions`` and ``messages``
append one small row per change (what kind, which session, which message). Other
instances read the rows after the last ``seq`` they saw and then fetch only the
rows those entries name (``threadline.store.change_feed``).

* SQLite has one writer at a time, so ``seq`` (AUTOINCREMENT, never reused) grows in
  commit order and plain ``AFTER`` triggers suffice.
* PostgreSQL hands out sequence numbers when a row is inserted, not when its
  transaction commits, so a reader could see seq 11 before seq 10 commits and skip
  10 for ever. The triggers are therefore *deferred constraint triggers*: they run
  at commit time, take one transaction-scoped advisory lock first (held until the
  commit is done, so log entries become visible in ``seq`` order) and send
  ``pg_notify('threadline_changes', seq)``. They run after every row lock of the
  transaction is taken, so the lock cannot deadlock with them.

Heartbeats (``writer``/``heartbeat_at``) and other updates that change nothing a
reader shows are not logged. A message deleted with its session (the cascade) is
not logged either: the session's own entry says it. The log keeps the last
``KEPT_ENTRIES`` entries: every 100th entry deletes those older than that.

Plain ``CREATE TRIGGER`` statements, never a table rebuild: ``sessions`` and
``messages`` carry the full-text triggers.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from threadline.store.coltypes import UTCDateTime

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEPT_ENTRIES = 10000
TRIM_EVERY = 100
CHANNEL = "threadline_changes"
ADVISORY_LOCK = 74_863_311
"""An arbitrary constant naming the lock that orders log entries by commit (PostgreSQL)."""

_NOW = "strftime('%Y-%m-%d %H:%M:%f000', 'now')"
"""SQLite's current UTC time in the text form ``UTCDateTime`` reads (microsecond digits)."""

_MESSAGE_SHOWN_SAME = (
    "old.status IS new.status AND old.kind IS new.kind AND old.content IS new.content "
    "AND old.metadata IS new.metadata AND old.parent_id IS new.parent_id"
)


def _sqlite_log(kind: str, session: str, message: str) -> str:
    return (
        "INSERT INTO change_log (at, kind, session_id, message_id) "
        f"VALUES ({_NOW}, {kind}, {session}, {message});"
    )


_MESSAGE_UPDATE_LOG = _sqlite_log(
    f"CASE WHEN {_MESSAGE_SHOWN_SAME} THEN 'message_text' ELSE 'message_changed' END",
    "new.session_id",
    "new.id",
)

SQLITE_TRIGGERS = {
    "change_log_session_insert": f"""
        CREATE TRIGGER change_log_session_insert AFTER INSERT ON sessions BEGIN
            {_sqlite_log("'session_created'", "new.id", "NULL")}
        END""",
    "change_log_session_update": f"""
        CREATE TRIGGER change_log_session_update AFTER UPDATE ON sessions BEGIN
            {_sqlite_log("'session_changed'", "new.id", "NULL")}
        END""",
    "change_log_session_delete": f"""
        CREATE TRIGGER change_log_session_delete AFTER DELETE ON sessions BEGIN
            {_sqlite_log("'session_deleted'", "old.id", "NULL")}
        END""",
    "change_log_message_insert": f"""
        CREATE TRIGGER change_log_message_insert AFTER INSERT ON messages BEGIN
            {_sqlite_log("'message_added'", "new.session_id", "new.id")}
        END""",
    "change_log_message_update": f"""
        CREATE TRIGGER change_log_message_update AFTER UPDATE ON messages
        WHEN old.text IS NOT new.text OR NOT ({_MESSAGE_SHOWN_SAME}) BEGIN
            {_MESSAGE_UPDATE_LOG}
        END""",
    "change_log_message_delete": f"""
        CREATE TRIGGER change_log_message_delete AFTER DELETE ON messages
        WHEN EXISTS (SELECT 1 FROM sessions WHERE id = old.session_id) BEGIN
            {_sqlite_log("'message_deleted'", "old.session_id", "old.id")}
        END""",
    "change_log_trim": f"""
        CREATE TRIGGER change_log_trim AFTER INSERT ON change_log WHEN new.seq % {TRIM_EVERY} = 0 BEGIN
            DELETE FROM change_log WHERE seq <= new.seq - {KEPT_ENTRIES};
        END""",
}

_PG_APPEND = f"""
CREATE FUNCTION threadline_change_append(change_kind text, session text, message text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    entry bigint;
BEGIN
    PERFORM pg_advisory_xact_lock({ADVISORY_LOCK});
    INSERT INTO change_log (at, kind, session_id, message_id)
        VALUES (clock_timestamp(), change_kind, session, message) RETURNING seq INTO entry;
    IF entry % {TRIM_EVERY} = 0 THEN
        DELETE FROM change_log WHERE seq <= entry - {KEPT_ENTRIES};
    END IF;
    PERFORM pg_notify('{CHANNEL}', entry::text);
END $$"""

_PG_SESSION = """
CREATE FUNCTION threadline_session_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM threadline_change_append('session_created', NEW.id, NULL);
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM threadline_change_append('session_changed', NEW.id, NULL);
    ELSE
        PERFORM threadline_change_append('session_deleted', OLD.id, NULL);
    END IF;
    RETURN NULL;
END $$"""

_PG_MESSAGE = """
CREATE FUNCTION threadline_message_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM threadline_change_append('message_added', NEW.session_id, NEW.id);
    ELSIF TG_OP = 'UPDATE' THEN
        IF OLD.status IS NOT DISTINCT FROM NEW.status AND OLD.kind IS NOT DISTINCT FROM NEW.kind
           AND OLD.content IS NOT DISTINCT FROM NEW.content
           AND OLD.metadata IS NOT DISTINCT FROM NEW.metadata
           AND OLD.parent_id IS NOT DISTINCT FROM NEW.parent_id THEN
            IF OLD.text IS DISTINCT FROM NEW.text THEN
                PERFORM threadline_change_append('message_text', NEW.session_id, NEW.id);
            END IF;
        ELSE
            PERFORM threadline_change_append('message_changed', NEW.session_id, NEW.id);
        END IF;
    ELSIF EXISTS (SELECT 1 FROM sessions WHERE id = OLD.session_id) THEN
        PERFORM threadline_change_append('message_deleted', OLD.session_id, OLD.id);
    END IF;
    RETURN NULL;
END $$"""

POSTGRES_STATEMENTS = [
    _PG_APPEND,
    _PG_SESSION,
    _PG_MESSAGE,
    "CREATE CONSTRAINT TRIGGER change_log_sessions AFTER INSERT OR UPDATE OR DELETE ON sessions "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION threadline_session_changed()",
    "CREATE CONSTRAINT TRIGGER change_log_messages AFTER INSERT OR UPDATE OR DELETE ON messages "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION threadline_message_changed()",
]


def upgrade() -> None:
    op.create_table(
        "change_log",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("message_id", sa.String(length=64), nullable=True),
        sqlite_autoincrement=True,
    )
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
        op.execute("DROP TRIGGER IF EXISTS change_log_sessions ON sessions")
        op.execute("DROP TRIGGER IF EXISTS change_log_messages ON messages")
        for function in ("threadline_session_changed", "threadline_message_changed"):
            op.execute(f"DROP FUNCTION IF EXISTS {function}()")
        op.execute("DROP FUNCTION IF EXISTS threadline_change_append(text, text, text)")
    op.drop_table("change_log")
