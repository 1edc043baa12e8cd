"""Where a failure shows is the bridge's choice, not the site's (docs/ui-layout.md, "Telling the user").

The database refuses writes the way a full disk does (a trigger added from a connection of
its own), so the store, the engine and the window meet the real error. The same sites then
fail with Settings open and closed, about a chat with an open tab and about none.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.refusing_db import REFUSAL, run_sql
from tests.support.ui_driving import new_tab_by_click as new_tab

from threadline.engine.engine import DATABASE_FILENAME

TIMEOUT = 15000


def refuse_updates(harness: Any, table: str) -> None:
    run_sql(
        harness.data_dir / DATABASE_FILENAME,
        f"CREATE TRIGGER refuse_{table}_update BEFORE UPDATE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END",
        f"CREATE TRIGGER refuse_{table}_insert BEFORE INSERT ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END",
    )


def open_settings(harness: Any) -> Any:
    window = harness.window
    window.open_settings()
    dialog = window._settings_dialog
    harness.qtbot.waitExposed(dialog)
    harness.qtbot.waitUntil(dialog.loaded.done, timeout=TIMEOUT)
    return dialog


@pytest.mark.expected_log_warnings
def test_a_window_failure_shows_in_the_open_settings_and_in_the_status_bar_once_it_closed(
    harness: Any,
) -> None:
    window = harness.open()
    dialog = open_settings(harness)
    refuse_updates(harness, "settings")
    window.zoom.zoom_in()  # the window stores the zoom: refused
    harness.qtbot.waitUntil(lambda: "full" in dialog.providers.message.text().lower(), timeout=TIMEOUT)
    assert "full" not in window.statusBar().currentMessage().lower()

    dialog.done(0)
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=TIMEOUT)
    window.zoom.zoom_in()
    harness.qtbot.waitUntil(lambda: "full" in window.statusBar().currentMessage().lower(), timeout=TIMEOUT)


@pytest.mark.expected_log_warnings
def test_a_failure_about_an_open_chat_shows_in_its_banner_even_with_settings_open(harness: Any) -> None:
    window = harness.open()
    tab = new_tab(harness)
    dialog = open_settings(harness)
    refuse_updates(harness, "sessions")
    window.sidebar.chat_actions.rename(tab.session_id, "A new name")
    harness.qtbot.waitUntil(lambda: tab.banner.error is not None, timeout=TIMEOUT)
    said = tab.banner.label.text()
    assert said.startswith("Could not rename the chat: ") and "full" in said.lower()
    assert window.statusBar().currentMessage() == said
    assert dialog.providers.message.text() == ""
