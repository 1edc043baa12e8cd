"""What the screenshot scripts share: a display (Xvfb when there is none), the output folder
(the first argument, else ``build/screenshots``), and a QApplication on a qasync loop with a
keychain in memory, in which the script's ``shoot(app, out)`` runs.

Scripts run as ``python .ci/screenshots_NAME.py [OUT_DIR]``, so this folder is on their path.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "desktop"))

Shoot = Callable[[Any, Path], Coroutine[Any, Any, int]]


def ensure_display() -> None:
    if os.environ.get("DISPLAY") or os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        return
    if shutil.which("xvfb-run") is None:
        print("no display and no xvfb-run: install xvfb, or set QT_QPA_PLATFORM=offscreen", file=sys.stderr)
        sys.exit(2)
    args = ["xvfb-run", "-a", "-s", "-screen 0 1400x900x24 -dpi 96", sys.executable, *sys.argv]
    sys.exit(subprocess.call(args))


def run(shoot: Shoot) -> int:
    """``shoot(app, out)`` on a display, with the app and its loop made; its exit code."""
    ensure_display()
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build" / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    from PySide6.QtWidgets import QApplication

    import threadline.ui  # noqa: F401  (first, as the app: tames PySide6's import hook)

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    import keyring
    from tests.support.memory_keyring import MemoryKeyring

    keyring.set_keyring(MemoryKeyring())
    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        return int(loop.run_until_complete(shoot(app, out)))
