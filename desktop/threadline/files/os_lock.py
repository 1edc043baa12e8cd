"""An OS lock on an open file: ``flock`` on POSIX, ``msvcrt.locking`` on Windows.

The kernel lets go of it when the file is closed or the process ends however it ends (a
crash, SIGKILL), so a lock never outlives its holder, and a reused PID cannot fool it (a lock
file that stores a PID can be). The data folder's instance lock (``app/instance_lock.py``)
and the local runtime's lock and leases (``models/runtime.py``, docs/local-models.md, "Two
windows, one runtime") take it here, so both platforms are written once.

On Windows the lock is on the file's first byte (``msvcrt`` locks a byte range from the
file's position, so the position goes to 0 first). That lock is mandatory there: nobody reads
or writes a lock file's content. Standard library only, nothing slow at import.
"""

from __future__ import annotations

import sys
import time
from typing import IO

RETRY = 0.05
"""Seconds between two tries of a blocking lock on Windows (``msvcrt`` has no wait without end)."""


def try_lock(handle: IO[bytes]) -> bool:
    """Take the lock without waiting: ``False`` when another open file (any process) holds it."""
    try:
        if sys.platform == "win32":
            import msvcrt

            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def lock(handle: IO[bytes]) -> None:
    """Take the lock, waiting as long as another holder keeps it (as ``flock`` does)."""
    if sys.platform == "win32":
        while not try_lock(handle):
            time.sleep(RETRY)
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)


def unlock(handle: IO[bytes]) -> None:
    """Let go of the lock while keeping the file open (closing it lets go too)."""
    if sys.platform == "win32":
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
