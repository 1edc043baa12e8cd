"""Who is writing a streaming reply, and whether that writer can still be alive.

Two app instances may share one database (a second window, or two machines on
one PostgreSQL server). When a store opens, a reply still marked
``streaming`` is either being written right now by another live instance, or
was left behind by a process that died. Each streaming reply therefore records
its writer (host and process id) and a heartbeat that the writer refreshes while
it streams. A reply is taken as interrupted when its writer is known to be dead,
or when its heartbeat is older than ``STALE_AFTER`` (a writer on another host,
whose process cannot be checked, or a process id reused by something else).
"""

from __future__ import annotations

import os
import socket
import sys
from datetime import datetime, timedelta

HEARTBEAT_EVERY = timedelta(seconds=5)
STALE_AFTER = timedelta(seconds=60)


def this_writer() -> str:
    return f"{socket.gethostname()}|{os.getpid()}"


def writer_alive(writer: str) -> bool | None:
    """``False`` when the writer is certainly gone, ``True`` when its process runs, ``None`` if unknown."""
    host, _, pid_text = writer.rpartition("|")
    if host != socket.gethostname() or not pid_text.isdigit():
        return None
    pid = int(pid_text)
    if pid == os.getpid():
        return False  # an earlier store of this very process, closed without finishing the reply
    if sys.platform == "win32":
        return None  # os.kill(pid, 0) would terminate the process there
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def left_behind(writer: str | None, heartbeat_at: datetime | None, now: datetime) -> bool:
    """Whether a ``streaming`` reply has nobody writing it any more."""
    if writer is None or heartbeat_at is None:
        return True  # written before writers were recorded, or by a store that never beat
    alive = writer_alive(writer)
    if alive is False:
        return True
    return now - heartbeat_at > STALE_AFTER
