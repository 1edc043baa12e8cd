"""The runtime's guard: a small process that owns the llama.cpp server and ends it with its users.

The runtime is shared by every Threadline process of a data folder, so it cannot die with
the process that started it; but it must not outlive them all either (a killed Threadline
would leave a model in memory). So the process that starts it runs this guard, in a session
of its own, and the guard runs the server as its child. Every user process holds a lease
(``models/runtime_leases.py``) that the OS lets go of when the process ends, SIGKILL
included. Every ``POLL`` seconds the guard takes the runtime's lock (when nobody is starting,
joining or stopping it) and counts the held leases: none left, it stops the server, removes
the state and the key, and exits. It also exits when the server stops, with its code, so the
starter can watch the guard as it would the server. On Linux the server gets
``PR_SET_PDEATHSIG``: a guard killed outright takes the server with it. docs/local-models.md,
"Two windows, one runtime", says why a process and not a thread.

Run as ``python -m threadline.models.runtime_guard STATE_DIR KEY_DIR -- COMMAND…`` (a frozen
build runs its own executable with ``GUARD_FLAG`` first, ``packaging/launcher.py``). The
server's pid is its first line of output. Standard library only: it starts in a blink.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

from threadline.files.os_lock import try_lock, unlock
from threadline.models.runtime_leases import KEY_FILE, LOCK_FILE, STATE_FILE, holders

GUARD_FLAG = "--threadline-runtime-guard"
POLL = 0.5
"""Seconds between two looks at the leases: how long a model stays in memory after its last user died."""
STOP_GRACE = 10.0
"""Seconds the server has to end after SIGTERM before it is killed."""
PR_SET_PDEATHSIG = 1


def guard_command(state_dir: Path, key_dir: Path, server: Sequence[str]) -> list[str]:
    """The command that runs ``server`` under a guard watching the leases of ``state_dir``."""
    if getattr(sys, "frozen", False):  # a PyInstaller build: no ``-m``, its launcher knows the flag
        head = [sys.executable, GUARD_FLAG]
    else:
        head = [sys.executable, "-m", "threadline.models.runtime_guard"]
    return [*head, str(state_dir), str(key_dir), "--", *server]


def main(argv: Sequence[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: runtime_guard STATE_DIR KEY_DIR -- COMMAND...", file=sys.stderr)
        return 2
    state_dir, key_dir, command = Path(argv[0]), Path(argv[1]), list(argv[3:])
    server = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=sys.stderr.fileno(),  # the runtime's log, which the starter gave as our stderr
        stderr=subprocess.STDOUT,
        preexec_fn=_dies_with_this_process(),  # safe: this process has one thread yet
    )
    sys.stdout.write(f"{server.pid}\n")
    sys.stdout.flush()
    sys.stdout.close()  # the starter reads up to here

    def end(_signum: int, _frame: FrameType | None) -> None:
        _terminate(server)

    for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGBREAK"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), end)
    threading.Thread(target=_watch, args=(server, state_dir, key_dir), daemon=True).start()
    code = server.wait()
    return code if code >= 0 else 128 - code  # ended by a signal: as a shell says it


def _watch(server: subprocess.Popen[bytes], state_dir: Path, key_dir: Path) -> None:
    while True:
        try:
            server.wait(POLL)
            return  # the server ended by itself: so does the guard
        except subprocess.TimeoutExpired:
            pass
        if _unused(server, state_dir, key_dir):
            return


def _unused(server: subprocess.Popen[bytes], state_dir: Path, key_dir: Path) -> bool:
    """Whether no process holds a lease; then the server is stopped and its state removed.

    Under the runtime's lock, taken only when free: a process starting, joining or stopping
    the runtime holds it, and a joining one takes its lease under it.
    """
    try:
        handle = open(state_dir / LOCK_FILE, "a+b")  # noqa: SIM115  (closed below)
    except OSError:
        return False
    with handle:
        if not try_lock(handle):
            return False
        try:
            if holders(state_dir):
                return False
            _forget(state_dir, key_dir, server.pid)
            _terminate(server)
            return True
        finally:
            with contextlib.suppress(OSError):
                unlock(handle)


def _forget(state_dir: Path, key_dir: Path, pid: int) -> None:
    """Remove the state and the key when they are this server's (a newer runtime's stay)."""
    try:
        state = json.loads((state_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(state, dict) and state.get("pid") == pid:
        for path in (state_dir / STATE_FILE, key_dir / KEY_FILE):
            with contextlib.suppress(OSError):
                path.unlink()


def _terminate(server: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        server.terminate()
    try:
        server.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            server.kill()


def _dies_with_this_process() -> Callable[[], None] | None:
    """On Linux, what the server runs before it starts: SIGKILL when this guard dies."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    guard = os.getpid()

    def arm() -> None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != guard:  # the guard died before the line above: nothing would tell
            os._exit(1)

    return arm


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
