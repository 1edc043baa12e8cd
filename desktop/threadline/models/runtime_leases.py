"""Who uses the shared runtime: one lease file per Threadline process, locked while it lives.

A process that uses the runtime makes a file in ``runtime/users/`` (its pid in the name, for
a person looking) and holds an OS lock on it (``files/os_lock.py``) until it closes. The OS
lets go of the lock when the process ends however it ends, SIGKILL included, so a lease
whose lock can be taken belongs to a process that is gone; whoever finds one removes it.
The runtime's guard (``models/runtime_guard.py``) stops the runtime when no lease is held,
and a closing process stops it when it held the last one (docs/local-models.md, "Two
windows, one runtime"). Standard library only: the guard imports this.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import IO

from threadline.files.os_lock import try_lock, unlock

USERS_FOLDER = "users"
STATE_FILE = "state.json"
"""The running runtime's pid, port, model and settings (no secret)."""
LOCK_FILE = "lock"
"""Taken to start, join, swap or stop the runtime: one at a time across processes."""
KEY_FILE = "runtime.key"


class Lease:
    """This process's lease, held from ``take`` until ``release`` (or the process's end)."""

    def __init__(self, path: Path, handle: IO[bytes]) -> None:
        self.path = path
        self._handle: IO[bytes] | None = handle

    @classmethod
    def take(cls, state_dir: Path) -> Lease:
        """A new lease in ``state_dir``. Made under the runtime's lock, so the guard never
        looks at it between its making and its locking."""
        folder = state_dir / USERS_FOLDER
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / f"{os.getpid()}-{secrets.token_hex(4)}.lease"
        handle = open(path, "a+b")  # noqa: SIM115  (held open: that is the lease)
        if not try_lock(handle):  # a new file nobody else knows yet: cannot be held
            handle.close()
            raise OSError(f"could not lock {path}")
        return cls(path, handle)

    @property
    def held(self) -> bool:
        return self._handle is not None

    def release(self) -> None:
        handle, self._handle = self._handle, None
        if handle is None:
            return
        with contextlib.suppress(OSError):
            unlock(handle)
        handle.close()  # first: Windows does not delete an open file
        with contextlib.suppress(OSError):
            self.path.unlink()


def holders(state_dir: Path, *, besides: Path | None = None) -> int:
    """How many live processes hold a lease (``besides``: not counting that one).

    The leases of processes that are gone are removed on the way (their lock could be taken).
    """
    try:
        paths = list((state_dir / USERS_FOLDER).glob("*.lease"))
    except OSError:
        return 0
    held = 0
    for path in paths:
        if besides is not None and path == besides:
            continue
        try:
            # Not created if it is gone: a lease released just now must not come back.
            fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
        except OSError:
            continue
        with os.fdopen(fd, "r+b") as handle:
            alive = not try_lock(handle)
            if not alive:
                with contextlib.suppress(OSError):
                    unlock(handle)
        if alive:
            held += 1
        else:
            with contextlib.suppress(OSError):
                path.unlink()  # its holder is gone (closed first: Windows does not delete an open file)
    return held
