"""A private X server (Xvfb) for a test that needs a real X11 display in a child process.

The suite's own QApplication is offscreen and cannot reach an X server, so the window runs
in a child process with ``QT_QPA_PLATFORM=xcb`` on this display. No window manager and no
compositor run on it, as on a bare X11 session.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.waiting import WAIT


def have(*programs: str) -> bool:
    return all(shutil.which(program) for program in programs)


@contextmanager
def xvfb_display(size: str = "1280x800x24", *options: str) -> Iterator[str]:
    """``:N`` of a fresh Xvfb; its display number comes back through ``-displayfd``.

    ``options``: more of Xvfb's, e.g. ``-wr`` for a white root window (black by default)."""
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", size, "-nolisten", "tcp", *options],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()  # blocks until the server listens (or exits: "")
        assert number, "Xvfb did not start"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=WAIT)


def x11_env(display: str, **extra: str) -> dict[str, str]:
    """This process's environment for a Qt child on ``display`` (xcb, no Wayland, no launcher tokens)."""
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", **extra}
    for name in ("WAYLAND_DISPLAY", "XDG_ACTIVATION_TOKEN", "DESKTOP_STARTUP_ID"):
        if name not in extra:
            env.pop(name, None)
    return env
