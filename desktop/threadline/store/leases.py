"""One turn per session across instances: the session lease (table ``session_leases``).

Two windows, two app instances on one file, or two machines on one PostgreSQL
server may all try to start a turn in the same chat. Each turn start first takes
the chat's lease; only the holder writes a turn. The lease is one row per
session, taken atomically (``INSERT … ON CONFLICT DO NOTHING``, then a
conditional ``UPDATE`` of a lease that is expired or already ours, inside the
store's write transaction: ``BEGIN IMMEDIATE`` on SQLite, a row lock on
PostgreSQL), refreshed by a heartbeat while the turn runs, and deleted once the
turn's writes are saved.

A holder is ``host|pid|instance``: the process as ``threadline.store.writers``
names writers, plus a token per engine (ending in the process's start where it can
be read), so two engines in one process (tests, or a window and a worker) are two
holders. A lease whose holder's process on this host is certainly gone is taken
over at once; one whose holder stopped beating for ``expires_after`` is taken over
too, unless that holder is a live process on this host, whose late heartbeat means
a busy machine (``lease_types.expired``; docs/storage.md, "A late heartbeat"). The
replies a holder left ``streaming`` in the session become ``interrupted`` in the
same transaction, as they would at start-up.

Another instance may set ``stop_requested``; the holder reads it with its next
heartbeat and stops its turn as Stop does.

Lease time is the database's time (``database_now``): on PostgreSQL the server's
clock writes ``acquired_at`` and ``heartbeat_at`` and decides expiry, so machines
whose clocks disagree still agree on which holder is alive. On SQLite every
writer is on one machine, and its clock is that time.

The plain types and the holder names are in ``lease_types``, which the engine imports
at start; the operations here are written in SQLAlchemy Core (no ORM), as every one a
turn runs is.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from threadline.core.messages import MessageStatus, utcnow
from threadline.store.coltypes import UTCDateTime
from threadline.store.core_tables import messages, session_leases
from threadline.store.lease_types import (
    Acquired,
    Beat,
    Lease,
    expired,
    holder_alive,
    new_holder,
    retire_holder,
)

__all__ = [
    "Acquired",
    "Beat",
    "Lease",
    "acquire",
    "database_now",
    "expired",
    "get_lease",
    "heartbeat",
    "holder_alive",
    "new_holder",
    "release",
    "request_stop",
    "retire_holder",
]


def database_now(connection: sa.Connection) -> datetime:
    """The time lease rows are written and judged by, as an aware UTC datetime.

    On PostgreSQL the server's clock (``clock_timestamp()``): two machines on one server
    with clocks a minute apart would otherwise take a live turn's lease away (the reader's
    clock ahead) or keep a dead holder's chat busy far too long (the reader's behind). On
    SQLite every writer shares this machine's clock, so that is the database's time.
    """
    if connection.dialect.name != "postgresql":
        return utcnow()
    now: datetime = connection.execute(sa.text("SELECT clock_timestamp()")).scalar_one()
    return now.astimezone(UTC)


def _lease(row: sa.Row[Any], read_at: datetime) -> Lease:
    return Lease(
        row.session_id, row.holder, row.host, row.acquired_at, row.heartbeat_at, row.stop_requested, read_at
    )


def get_lease(connection: sa.Connection, session_id: str) -> Lease | None:
    row = connection.execute(_select_lease(session_id)).first()
    return _lease(row, database_now(connection)) if row is not None else None


def _select_lease(session_id: str) -> sa.Select[Any]:
    return sa.select(session_leases).where(session_leases.c.session_id == session_id)


_INSERT = sa.text(
    "INSERT INTO session_leases (session_id, holder, host, acquired_at, heartbeat_at, stop_requested) "
    "VALUES (:session_id, :holder, :host, :now, :now, :no) ON CONFLICT (session_id) DO NOTHING"
).bindparams(sa.bindparam("now", type_=UTCDateTime()), sa.bindparam("no", type_=sa.Boolean()))


def acquire(connection: sa.Connection, session_id: str, holder: str, expires_after: timedelta) -> Acquired:
    """Take the lease of ``session_id`` for ``holder`` if it is free, ours, or expired."""
    now = database_now(connection)
    host = holder.split("|", 1)[0]
    inserted = connection.execute(
        _INSERT, {"session_id": session_id, "holder": holder, "host": host, "now": now, "no": False}
    )
    if inserted.rowcount == 1:
        return Acquired(None)
    row = connection.execute(_select_lease(session_id).with_for_update()).one()
    current = _lease(row, now)
    if current.holder != holder and not expired(current, now, expires_after):
        return Acquired(current)
    taken = connection.execute(
        sa.update(session_leases)
        .where(session_leases.c.session_id == session_id)
        .where(session_leases.c.holder == current.holder)
        .where(session_leases.c.heartbeat_at == current.heartbeat_at)
        .values(holder=holder, host=host, acquired_at=now, heartbeat_at=now, stop_requested=False)
    )
    if taken.rowcount != 1:  # someone beat us to it between the read and the update
        latest = get_lease(connection, session_id)
        return Acquired(latest) if latest is not None and latest.holder != holder else Acquired(None)
    if current.holder == holder:
        return Acquired(None)
    return Acquired(None, current.holder, _interrupt_left_behind(connection, session_id, current.holder))


def _interrupt_left_behind(connection: sa.Connection, session_id: str, holder: str) -> tuple[str, ...]:
    """The replies a dead holder left ``streaming`` in the session become ``interrupted``."""
    process = holder.rpartition("|")[0]
    ids = (
        connection.execute(
            sa.select(messages.c.id)
            .where(messages.c.session_id == session_id)
            .where(messages.c.status == MessageStatus.STREAMING.value)
            .where(messages.c.writer == process)
        )
        .scalars()
        .all()
    )
    if ids:
        connection.execute(
            sa.update(messages).where(messages.c.id.in_(ids)).values(status=MessageStatus.INTERRUPTED.value)
        )
    return tuple(ids)


def heartbeat(connection: sa.Connection, session_id: str, holder: str) -> Beat:
    """Refresh our lease; says whether it is still ours and whether another instance asked to stop."""
    beat = connection.execute(
        sa.update(session_leases)
        .where(session_leases.c.session_id == session_id)
        .where(session_leases.c.holder == holder)
        .values(heartbeat_at=database_now(connection))
    )
    if beat.rowcount != 1:
        return Beat(held=False, stop_requested=False)
    stop = connection.execute(
        sa.select(session_leases.c.stop_requested).where(session_leases.c.session_id == session_id)
    ).scalar_one()
    return Beat(held=True, stop_requested=bool(stop))


def release(connection: sa.Connection, session_id: str, holder: str) -> None:
    """Give the lease up (the turn's writes are saved); a lease taken over meanwhile is left alone."""
    connection.execute(
        sa.delete(session_leases)
        .where(session_leases.c.session_id == session_id)
        .where(session_leases.c.holder == holder)
    )


def request_stop(connection: sa.Connection, session_id: str) -> Lease | None:
    """Ask the holder of ``session_id``'s lease to stop its turn; the lease asked, or ``None``."""
    connection.execute(
        sa.update(session_leases).where(session_leases.c.session_id == session_id).values(stop_requested=True)
    )
    return get_lease(connection, session_id)
