"""Every control a keyboard reaches has a name a screen reader can say.

The walk asks Qt's accessibility API (``QAccessible.queryAccessibleInterface``) for the
name of each shown, focusable widget of the main window (sidebar, tabs, conversation,
composer, approval bar, error banner, start page), each settings page, the start-up
problem dialog and the shortcuts sheet. A name must contain a letter or digit: an icon
or "×" alone says nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QPushButton, QToolButton
from tests.support.accessible_walk import accessible_name, focusable_controls, unnamed_controls
from tests.support.ui_driving import new_tab_by_shortcut

from threadline.core.messages import ToolCall
from threadline.engine.events import ErrorAction, UserFacingError
from threadline.ui.window.shortcuts_sheet import ShortcutsSheet, sheet_entries, widget_keys
from threadline.ui.window.startup_dialog import StartupProblemDialog

TIMEOUT = 15000


def test_the_walk_catches_a_nameless_icon_button(qtbot: Any) -> None:
    button = QToolButton()
    button.setText("×")
    qtbot.addWidget(button)
    button.show()
    assert unnamed_controls(button) != []
    button.setAccessibleName("Close")
    assert unnamed_controls(button) == []


def test_the_start_page_and_sidebar_name_every_control(harness: Any) -> None:
    window = harness.open()
    assert len(focusable_controls(window)) >= 4
    assert unnamed_controls(window) == []


def test_a_tab_with_an_approval_and_an_error_names_every_control(harness: Any) -> None:
    window = harness.open()
    tab = new_tab_by_shortcut(harness)
    new_tab_by_shortcut(harness)
    window.tabs.setCurrentWidget(tab)
    tab.approval.ask(
        [ToolCall("c1", "shell", '{"command": "ls"}'), ToolCall("c2", "write_file", '{"path": "a.txt"}')], {}
    )
    tab.banner.show_error(UserFacingError("network", "Could not reach the server.", tuple(ErrorAction)))
    harness.qtbot.waitUntil(lambda: tab.approval.isVisible() and tab.banner.isVisible(), timeout=TIMEOUT)
    controls = focusable_controls(window)
    for must in (tab.view, tab.composer.edit, tab.approval.allow_all_button, window.tabs.tab_list_button):
        assert must in controls
    assert unnamed_controls(window) == []
    # Buttons that show only a symbol say what they do.
    close = tab.banner.close_button
    assert accessible_name(close) == "Dismiss message"
    assert accessible_name(window.tabs.tab_list_button) == "List all tabs"
    close_tab = window.tabs.tabBar().tabButton(0, window.tabs.tabBar().ButtonPosition.RightSide)
    assert accessible_name(close_tab) == f"Close {tab.title}"


def test_every_settings_page_names_every_control(harness: Any) -> None:
    window = harness.open()
    window.open_settings()
    dialog = window._settings_dialog
    harness.qtbot.waitUntil(dialog.loaded.done, timeout=TIMEOUT)
    problems: dict[str, list[str]] = {}
    for i in range(dialog.pages.count()):
        dialog.pages.setCurrentIndex(i)
        harness.qtbot.waitUntil(lambda i=i: dialog.pages.widget(i).isVisible(), timeout=TIMEOUT)
        found = unnamed_controls(dialog)
        if found:
            problems[dialog.pages.tabText(i)] = found
    dialog.reject()
    assert problems == {}


def test_the_startup_problem_dialog_names_every_control(qtbot: Any, tmp_path: Path) -> None:
    backup = tmp_path / "threadline-2026-05-01T09-30-00.db"
    backup.write_bytes(b"")
    dialog = StartupProblemDialog("The database is damaged.", data_dir=tmp_path, backup=backup)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert len([w for w in focusable_controls(dialog) if isinstance(w, QPushButton)]) == 4
    assert unnamed_controls(dialog) == []


def test_the_shortcuts_sheet_names_every_control(harness: Any) -> None:
    window = harness.open()
    sheet = ShortcutsSheet(sheet_entries(window, window.menuBar(), widget_keys()), window)
    sheet.show()
    harness.qtbot.waitExposed(sheet)
    assert unnamed_controls(sheet) == []
    sheet.close()
    sheet.deleteLater()
