"""Session leases without the ORM: the holder names and the leases as read (see ``leases``).

The engine names its holder when it is made and judges expiry while it runs; neither needs
the database, so these live apart from ``leases``'s operations, whose SQLModel tables (and
with them SQLAlchemy's ORM and pydantic) are imported when a turn first takes a lease.
"""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta

from threadline.store.writers import writer_alive

_LIVE_HOLDERS: set[str] = set()
"""Holders made by this process and not yet retired (``retire_holder``)."""


def new_holder() -> str:
    """A holder name for one engine of this process: ``host|pid|token``."""
    holder = f"{socket.gethostname()}|{os.getpid()}|{secrets.token_hex(4)}"
    _LIVE_HOLDERS.add(holder)
    return holder


def retire_holder(holder: str) -> None:
    """The engine that used ``holder`` closed: a lease it left behind is free at once."""
    _LIVE_HOLDERS.discard(holder)


def holder_alive(holder: str) -> bool | None:
    """``False`` when the holder is certainly gone, ``True`` when alive, ``None`` when unknown."""
    process, _, _token = holder.rpartition("|")
    host, _, pid_text = process.rpartition("|")
    if host == socket.gethostname() and pid_text == str(os.getpid()):
        return holder in _LIVE_HOLDERS
    return writer_alive(process)


@dataclass(frozen=True, slots=True)
class Lease:
    """A session's lease as stored."""

    session_id: str
    holder: str
    host: str
    acquired_at: datetime
    heartbeat_at: datetime
    stop_requested: bool
    read_at: datetime
    """The database's time when the lease was read: judge ``expired`` by it, not this machine's clock."""


@dataclass(frozen=True, slots=True)
class Acquired:
    """The outcome of asking for a lease: ``held`` is ``None`` when ours, else the other holder's lease."""

    held: Lease | None
    taken_from: str | None = None
    """The holder whose expired lease was taken over (its streaming replies now ``interrupted``)."""
    interrupted: tuple[str, ...] = ()
    """Ids of the replies that holder left ``streaming``, now ``interrupted``."""

    @property
    def ok(self) -> bool:
        return self.held is None


@dataclass(frozen=True, slots=True)
class Beat:
    """What a heartbeat found: whether the lease is still ours, and whether a stop was asked."""

    held: bool
    stop_requested: bool


def expired(lease: Lease, now: datetime, expires_after: timedelta) -> bool:
    """Whether a lease's holder is gone: its heartbeat is too old, or its process has ended.

    ``now`` is the database's time (``database_now``, or the lease's ``read_at``), the
    clock that wrote ``heartbeat_at``.
    """
    return now - lease.heartbeat_at > expires_after or holder_alive(lease.holder) is False
