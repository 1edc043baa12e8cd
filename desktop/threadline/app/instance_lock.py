"""The data folder's instance lock: who runs the window on it (docs/desktop.md, "One instance").

An OS lock on ``instance.lock`` (``flock`` on POSIX, ``msvcrt.locking`` on Windows, both in
``files/os_lock.py``), held through an open file for the life of the process. The kernel lets
go of it when the process ends however it ends, so a crash never leaves a lock behind, and a
reused PID cannot fool it (a lock file that stores a PID can be). Standard library only: it is
taken before the first paint, where every millisecond counts (docs/performance.md, "Desktop citizen").
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

LOCK_NAME = "instance.lock"


class InstanceLock:
    def __init__(self, handle: IO[bytes]) -> None:
        self._handle: IO[bytes] | None = handle

    def unlock(self) -> None:
        if self._handle is not None:
            self._handle.close()  # closing the file lets go of the lock
            self._handle = None


def take_lock(data_dir: Path) -> InstanceLock | None:
    """The lock, or ``None`` when another live process holds it."""
    if not data_dir.is_dir():  # a first start: the folder as the engine would make it
        from threadline.files.private import private_folder

        private_folder(data_dir)
    from threadline.files.os_lock import try_lock

    handle = open(data_dir / LOCK_NAME, "a+b")  # noqa: SIM115  (held open: that is the lock)
    if not try_lock(handle):
        handle.close()
        return None
    return InstanceLock(handle)
