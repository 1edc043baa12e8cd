"""The Wayland backend's D-Bus flow against a stand-in portal on a private session bus.

No compositor runs here, so the real portal cannot answer; ``tests/support/fake_portal.py``
answers as it does (request paths, ``Response`` signals, ``Activated``). This checks the
calls, their signatures (``a(sa{sv})`` above all), the trigger's text and the wiring of a
press to Quick ask, not a compositor's own behaviour.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QKeySequence
from tests.support.waiting import WAIT_MS

from threadline.ui.quick_ask.shortcuts.portal import PortalShortcut

pytestmark = pytest.mark.skipif(shutil.which("dbus-daemon") is None, reason="needs dbus-daemon")

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def session_bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    daemon = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert daemon.stdout is not None
        address = daemon.stdout.readline().strip()
        assert address, "dbus-daemon did not start"
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        yield address
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)


@pytest.fixture
def portal(session_bus: str) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_portal"],
        cwd=ROOT,
        env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": session_bus},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "READY"
        yield process
    finally:
        process.terminate()
        process.wait(timeout=60)


def test_bind_through_the_portal_and_a_press_arrives(
    qloop: Any, qtbot: Any, portal: subprocess.Popen[str]
) -> None:
    pressed: list[int] = []
    failed: list[str] = []
    backend = PortalShortcut(failed.append)
    backend.bind(QKeySequence("Ctrl+Alt+Space"), lambda: pressed.append(1))
    try:
        qtbot.waitUntil(lambda: bool(pressed or failed), timeout=WAIT_MS)
        assert failed == [] and pressed == [1]
        assert portal.stdout is not None
        assert portal.stdout.readline().split() == ["BOUND", "quick-ask", "CTRL+ALT+space"]
    finally:
        backend.unbind()


def test_no_portal_says_so(qloop: Any, qtbot: Any, session_bus: str) -> None:
    failed: list[str] = []
    backend = PortalShortcut(failed.append)
    backend.bind(QKeySequence("Ctrl+Alt+Space"), lambda: None)
    qtbot.waitUntil(lambda: bool(failed), timeout=WAIT_MS)
    assert failed == ["No desktop portal is running."]
