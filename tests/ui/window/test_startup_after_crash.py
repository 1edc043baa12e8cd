"""After an unexpected error the open tabs are saved at once, so the next start brings them back."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from tests.support.ui_driving import new_tab_by_shortcut
from tests.support.waiting import WAIT_MS

from threadline.app.start import save_tabs_after_crash
from threadline.ui.common.crash_handler import CrashHandler
from threadline.ui.common.tasks import spawn


@pytest.mark.expected_log_errors
def test_tabs_saved_by_the_crash_handler_come_back_after_the_process_dies(harness: Any) -> None:
    window = harness.open()
    qtbot = harness.qtbot
    first = new_tab_by_shortcut(harness)
    second = new_tab_by_shortcut(harness)
    window._save_timer.stop()  # the debounced save must not be what saves them
    window._save_timer.setInterval(3_600_000)
    saves = window.saves

    crash = CrashHandler(None, save_session=lambda: save_tabs_after_crash(window))
    crash.install()
    try:

        async def broken() -> None:
            raise AttributeError("a bug in a slot")

        spawn(broken(), tell=window)
        qtbot.waitUntil(lambda: window.saves == saves + 1 and crash.dialog is not None, timeout=WAIT_MS)
        dialog = crash.dialog
        assert dialog is not None
        assert "open tabs were saved" in dialog.message.text()
        qtbot.mouseClick(dialog.keep_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: crash.dialog is None, timeout=WAIT_MS)
    finally:
        crash.uninstall()
    expected = [first.session_id, second.session_id]
    for _ in range(200):  # the save was started; read until the store has it (no fixed sleep)
        state = harness.run(harness.engine.settings.get_setting("ui.window", None))
        if isinstance(state, dict) and state.get("tabs") == expected:
            break
    assert state["tabs"] == expected

    harness.crash()  # no close event: only what was saved survives
    window = harness.open()
    qtbot.waitUntil(lambda: window.tabs.count() == 2, timeout=WAIT_MS)
    assert [t.session_id for t in window.tabs.tabs()] == expected
    assert window.tabs.current_tab().session_id == second.session_id
