"""Settings → Desktop: each switch is saved at once and followed by the desktop room; "Start at
login" writes and removes the XDG autostart entry (docs/desktop.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.waiting import WAIT_MS

from threadline.ui.common.desktop_prefs import DesktopPrefs, DesktopSwitches


def open_desktop_page(harness: Any) -> Any:
    harness.window.open_settings("desktop")
    dialog = harness.window._settings_dialog
    assert dialog.pages.currentWidget() is dialog.desktop
    return dialog


def stored(harness: Any) -> Any:
    return harness.run(harness.engine.settings.get_setting("desktop", {}))


def test_the_switches_are_saved_at_once_and_shared_with_the_desktop_room(harness: Any, qapp: Any) -> None:
    harness.open()
    dialog = open_desktop_page(harness)
    page = dialog.desktop
    prefs = DesktopPrefs.of(qapp)
    harness.qtbot.waitUntil(lambda: page.switches() == DesktopSwitches(), timeout=WAIT_MS)
    assert not page.show_text.isChecked()  # reply text in notifications: off unless chosen

    page.show_text.setChecked(True)
    page.notify_approval.setChecked(False)
    harness.qtbot.waitUntil(lambda: stored(harness).get("show_text") is True, timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: stored(harness).get("notify_approval") is False, timeout=WAIT_MS)
    assert prefs.switches.show_text and not prefs.switches.notify_approval
    dialog.reject()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG autostart is Linux's")
def test_start_at_login_writes_and_removes_the_autostart_entry(
    harness: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    entry = tmp_path / "config" / "autostart" / "threadline.desktop"
    harness.open()
    page = open_desktop_page(harness).desktop
    assert not page.start_at_login.isChecked()
    page.start_at_login.setChecked(True)
    assert entry.is_file()
    assert f"--data-dir {harness.data_dir}" in entry.read_text(encoding="utf-8")
    page.start_at_login.setChecked(False)
    assert not entry.exists()
    harness.window._settings_dialog.reject()
