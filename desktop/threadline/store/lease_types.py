"""Session leases without the ORM: the holder names and the leases as read (see ``leases``).

The engine names its holder when it is made and judges expiry while it runs; neither needs
the database, so these live apart from ``leases``'s operations, whose SQLModel tables (and
with them SQLAlchemy's ORM and pydantic) are imported when a turn first takes a lease.

How a lease is judged (docs/storage.md, "A dead holder" and "A late heartbeat"): a holder
whose process is certainly gone is expired at once; a holder that is certainly a live
process on this machine is not expired by a late heartbeat (a busy or paused machine, not a
dead holder) until ``LIVE_SILENCE``; any other holder — on another machine, or one whose
process cannot be told apart from a later one reusing its pid — by its heartbeat's age.
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta

from threadline.store.writers import writer_alive

LIVE_SILENCE = timedelta(seconds=60)
"""How long a live process on this machine may go without a heartbeat before its lease is taken.

Far beyond any lateness load causes (docs/performance.md, "Lease heartbeats under load"):
only a process that is stopped (Ctrl+Z on an ``ask``, a debugger), cut off from its database
server, or that failed to give a finished turn's lease up stays silent this long.
"""

_LIVE_HOLDERS: set[str] = set()
"""Holders made by this process and not yet retired (``retire_holder``)."""


def process_started(pid: int) -> str | None:
    """When process ``pid`` started, as the kernel counts it; ``None`` where that cannot be read.

    With the pid it names one process: a pid reused by a later process has another start.
    Linux only (``/proc/<pid>/stat``, clock ticks since boot); elsewhere holders are judged
    by their heartbeat alone.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()  # after the command name, which may hold spaces
    return fields[19].decode("ascii", "replace") if len(fields) > 19 else None


_OWN_START: dict[int, str | None] = {}
"""This process's start by pid: read once, again after a fork (the child has its own pid)."""


def _own_start() -> str | None:
    pid = os.getpid()
    if pid not in _OWN_START:
        _OWN_START[pid] = process_started(pid)
    return _OWN_START[pid]


def new_holder() -> str:
    """A holder name for one engine of this process: ``host|pid|token``.

    The token is random per engine, followed by ``.<start>`` (``process_started``) where the
    process's start can be read, so a reader on this machine can tell this process from a
    later one given the same pid.
    """
    started = _own_start()
    token = secrets.token_hex(4) if started is None else f"{secrets.token_hex(4)}.{started}"
    holder = f"{socket.gethostname()}|{os.getpid()}|{token}"
    _LIVE_HOLDERS.add(holder)
    return holder


def retire_holder(holder: str) -> None:
    """The engine that used ``holder`` closed: a lease it left behind is free at once."""
    _LIVE_HOLDERS.discard(holder)


def _this_process(holder: str) -> bool:
    process = holder.rpartition("|")[0]
    host, _, pid_text = process.rpartition("|")
    return host == socket.gethostname() and pid_text == str(os.getpid())


def holder_alive(holder: str) -> bool | None:
    """``False`` when the holder is certainly gone, ``True`` when certainly alive, ``None`` when unknown.

    Certainly alive: an engine of this process not yet retired, or a process on this machine
    with the holder's pid and the start its name records. A running pid with another start
    is a later process (the holder is gone); a holder from another machine, or one whose
    name records no start, is unknown.
    """
    process, _, token = holder.rpartition("|")
    started = token.partition(".")[2] or None
    if _this_process(holder):
        return holder in _LIVE_HOLDERS
    alive = writer_alive(process)
    if alive is not True:
        return alive
    if started is None:
        return None
    now_started = process_started(int(process.rpartition("|")[2]))
    if now_started is None:
        return None
    return now_started == started


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
    """Whether a lease's holder is gone: its process has ended, or its heartbeat is too old.

    ``now`` is the database's time (``database_now``, or the lease's ``read_at``), the
    clock that wrote ``heartbeat_at``. A late heartbeat from a live process on this machine
    is the machine being busy, not the holder dying: such a lease holds until ``LIVE_SILENCE``.
    An engine of this very process is judged by ``expires_after``: the process runs (it is
    the one reading), so that engine's silence means it cannot reach the database.
    """
    alive = holder_alive(lease.holder)
    if alive is False:
        return True
    silent = now - lease.heartbeat_at
    if alive is True and not _this_process(lease.holder):
        return silent > max(LIVE_SILENCE, expires_after)
    return silent > expires_after
