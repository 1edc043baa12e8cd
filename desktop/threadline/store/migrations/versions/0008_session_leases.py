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

Taking, handing over, stopping and giving up a lease reach other instances through
the change feed: triggers append a ``session_changed`` entry for the session (on
PostgreSQL through the feed's ``threadline_change_append``, so the entry is ordered
and notified like every other). Heartbeats are not logged. A reader that sees the
entry reads the lease (``Engine`` does, for the chats it has open); readers that do
not care find the session row unchanged and show nothing new.
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


_LEASE_SHOWN_CHANGED = "old.holder IS NOT new.holder OR old.stop_requested IS NOT new.stop_requested"
_SQLITE_NOW = "strftime('%Y-%m-%d %H:%M:%f000', 'now')"


def _sqlite_log(session: str) -> str:
    return (
        "INSERT INTO change_log (at, kind, session_id, message_id) "
        f"VALUES ({_SQLITE_NOW}, 'session_changed', {session}, NULL);"
    )


SQLITE_TRIGGERS = {
    "change_log_lease_insert": f"""
        CREATE TRIGGER change_log_lease_insert AFTER INSERT ON session_leases BEGIN
            {_sqlite_log("new.session_id")}
        END""",
    "change_log_lease_update": f"""
        CREATE TRIGGER change_log_lease_update AFTER UPDATE ON session_leases
        WHEN {_LEASE_SHOWN_CHANGED} BEGIN
            {_sqlite_log("new.session_id")}
        END""",
    "change_log_lease_delete": f"""
        CREATE TRIGGER change_log_lease_delete AFTER DELETE ON session_leases BEGIN
            {_sqlite_log("old.session_id")}
        END""",
}

_PG_LEASE = """
CREATE FUNCTION threadline_lease_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM threadline_change_append('session_changed', NEW.session_id, NULL);
    ELSIF TG_OP = 'UPDATE' THEN
        IF OLD.holder IS DISTINCT FROM NEW.holder
           OR OLD.stop_requested IS DISTINCT FROM NEW.stop_requested THEN
            PERFORM threadline_change_append('session_changed', NEW.session_id, NULL);
        END IF;
    ELSE
        PERFORM threadline_change_append('session_changed', OLD.session_id, NULL);
    END IF;
    RETURN NULL;
END $$"""

POSTGRES_STATEMENTS = [
    _PG_LEASE,
    "CREATE CONSTRAINT TRIGGER change_log_leases AFTER INSERT OR UPDATE OR DELETE ON session_leases "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION threadline_lease_changed()",
]


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
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in SQLITE_TRIGGERS.values():
            op.execute(statement)
    elif dialect == "postgresql":
        for statement in POSTGRES_STATEMENTS:
            op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS change_log_leases ON session_leases")
        op.execute("DROP FUNCTION IF EXISTS threadline_lease_changed()")
    op.drop_table("session_leases")  # SQLite drops the table's triggers with it
