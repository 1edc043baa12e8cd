"""End to end through the Linux accessibility bus: the chat as a screen reader reads it.

A chat view streams a reply in its own process under Xvfb, with a private session bus
(``dbus-run-session``), the AT-SPI bus and registry Debian's at-spi2-core starts on
demand, and ``QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1`` so Qt exports its widgets. A reader in
Debian's own Python (pyatspi is not on PyPI) finds the app on the desktop as Orca would,
walks to the "Messages" list and reads the last item once the reply has finished, and
listens for the announcement of the finished reply.

Skipped only when those system packages are missing (``.ci/setup --dev`` installs them:
xvfb, at-spi2-core, dbus-x11, python3-pyatspi).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SYSTEM_PYTHON = "/usr/bin/python3"


def missing_packages() -> list[str]:
    missing = [tool for tool in ("xvfb-run", "dbus-run-session") if shutil.which(tool) is None]
    if not any(
        Path(p).exists()
        for p in ("/usr/libexec/at-spi-bus-launcher", "/usr/lib/at-spi2-core/at-spi-bus-launcher")
    ):
        missing.append("at-spi2-core")
    has_pyatspi = (
        Path(SYSTEM_PYTHON).exists()
        and subprocess.run(
            [SYSTEM_PYTHON, "-c", "import pyatspi"], capture_output=True, check=False
        ).returncode
        == 0
    )
    if not has_pyatspi:
        missing.append("python3-pyatspi")
    return missing


MISSING = missing_packages() if sys.platform.startswith("linux") else ["Linux"]

pytestmark = pytest.mark.skipif(
    bool(MISSING),
    reason=f"the accessibility-bus test needs {', '.join(MISSING)} (.ci/setup --dev installs them)",
)


def test_screen_reader_reads_the_finished_reply_from_the_accessibility_tree() -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("QT_QPA_PLATFORM", "QT_ACCESSIBILITY", "DBUS_SESSION_BUS_ADDRESS")
    }
    env.update(QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1", QT_QPA_PLATFORM="xcb")
    command = [
        "dbus-run-session", "--", "xvfb-run", "-a",
        SYSTEM_PYTHON, str(HERE / "atspi" / "read_last_reply.py"),
        sys.executable, str(HERE / "atspi" / "chat_view_app.py"), "1500",
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"the reader printed nothing\n{done.stdout}\n{done.stderr[-3000:]}"
    seen = json.loads(lines[-1])
    assert seen["found_app"], seen
    assert seen.get("app_exit") == 0, f"the app did not end cleanly: {seen}\n{done.stderr[-3000:]}"
    items = seen.get("items")
    assert items, f"the reply never showed finished in the accessibility tree: {seen}"
    assert [i["role"] for i in items] == ["list item"] * 4
    assert [i["description"] for i in items] == [
        "Hello?",
        "Hi! Ask me anything.",
        "What is the capital of France?",
        "The capital of France is Paris.",
    ]
    last = items[-1]
    assert last["name"].startswith("gpt-e2e, ") and "Streaming" not in last["name"]
    assert ("Copy", "Ctrl+C") in [tuple(a) for a in last["actions"]]
    assert ("Regenerate", "R") in [tuple(a) for a in last["actions"]]
    assert seen["announcements"] == ["gpt-e2e replied: The capital of France is Paris."]  # once, whole
