"""The window without a mouse: Tab order, F6 between panes, many tabs and their list, the shortcuts sheet.

Every step is a key press on the widget that has the focus, as a keyboard-only user
makes it; the checks read where the focus went and what Qt's accessibility API says
about it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QToolButton, QWidget
from tests.support.accessible_walk import accessible_name
from tests.support.ui_driving import new_tab_by_shortcut

from threadline.engine.events import ErrorAction, UserFacingError
from threadline.ui.window.tab_container import READABLE_TAB_WIDTH

TIMEOUT = 15000
CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def focused() -> QWidget:
    widget = QApplication.focusWidget()
    assert widget is not None, "nothing has the keyboard focus"
    return widget


NONE = Qt.KeyboardModifier.NoModifier


def press(harness: Any, key: Qt.Key, modifiers: Qt.KeyboardModifier = NONE) -> QWidget:
    """Press a key on whatever has the focus; return what has it afterwards."""
    before = focused()
    harness.qtbot.keyClick(before, key, modifiers)
    return focused()


def walk_tab(harness: Any, start: QWidget, limit: int = 30) -> list[QWidget]:
    """Press Tab from ``start`` until the focus comes back to it; the widgets met, in order."""
    start.setFocus(Qt.FocusReason.OtherFocusReason)
    harness.qtbot.waitUntil(lambda: focused() is start, timeout=TIMEOUT)
    met = [start]
    for _ in range(limit):
        widget = press(harness, Qt.Key.Key_Tab)
        if widget is start:
            return met
        met.append(widget)
    raise AssertionError(f"Tab never came back to the start: {[accessible_name(w) for w in met]}")


def test_tab_goes_sidebar_then_tabs_then_conversation_then_composer(harness: Any) -> None:
    window = harness.open()
    new_tab_by_shortcut(harness)
    tab = new_tab_by_shortcut(harness)
    met = walk_tab(harness, window.sidebar.filter)
    names = [accessible_name(w) for w in met]
    # The sidebar, then the tab bar, then the chat: exactly these stops, in this order.
    assert names[:8] == [
        "Search chats",
        "New",
        "New project",  # the projects section's "+" (its list is hidden while there are none)
        "Chats",
        "Archived",
        tab.title,  # the tab bar reads as its current tab
        "List all tabs",
        "Conversation",
    ]
    # Then the chat tab's own controls (a strip above the composer may come first), the
    # message box before its buttons, and nothing outside the tab until Tab wraps around.
    rest = met[8:]
    assert all(tab.isAncestorOf(w) for w in rest)
    composer = [tab.composer.edit, tab.composer.attach_button, tab.composer.model_picker]
    assert [w for w in rest if w in composer] == composer
    assert rest.index(tab.composer.edit) <= 2, [accessible_name(w) for w in rest]
    assert all(not n.startswith("Close ") for n in names), "tab close buttons are not Tab stops"

    # Shift+Tab walks the same way back.
    tab.composer.edit.setFocus()
    back = [press(harness, Qt.Key.Key_Backtab, SHIFT) for _ in range(rest.index(tab.composer.edit) + 1)]
    assert back[-1] is tab.view


def test_f6_cycles_the_panes_and_shift_f6_goes_back(harness: Any) -> None:
    window = harness.open()
    tab = new_tab_by_shortcut(harness)
    window.sidebar.filter.setFocus()
    harness.qtbot.waitUntil(lambda: focused() is window.sidebar.filter, timeout=TIMEOUT)

    stops = [press(harness, Qt.Key.Key_F6) for _ in range(4)]
    assert stops == [window.tabs.tabBar(), tab.view, tab.composer.edit, window.sidebar.list]
    # Entered from the keyboard: Qt draws the focus indicator.
    assert window.testAttribute(Qt.WidgetAttribute.WA_KeyboardFocusChange)

    back = [press(harness, Qt.Key.Key_F6, SHIFT) for _ in range(4)]
    assert back == [tab.composer.edit, tab.view, window.tabs.tabBar(), window.sidebar.list]


def test_f6_stops_at_a_notice_between_the_conversation_and_the_composer(harness: Any) -> None:
    harness.open()
    tab = new_tab_by_shortcut(harness)
    tab.banner.show_error(UserFacingError("network", "Could not reach the server.", (ErrorAction.RETRY,)))
    tab.view.setFocus()
    harness.qtbot.waitUntil(lambda: focused() is tab.view, timeout=TIMEOUT)
    assert press(harness, Qt.Key.Key_F6) is tab.banner.button(ErrorAction.RETRY)
    assert press(harness, Qt.Key.Key_F6) is tab.composer.edit


def test_f6_without_tabs_reaches_the_start_page(harness: Any) -> None:
    window = harness.open()
    window.sidebar.filter.setFocus()
    harness.qtbot.waitUntil(lambda: focused() is window.sidebar.filter, timeout=TIMEOUT)
    assert press(harness, Qt.Key.Key_F6) is window.empty.new_button
    assert window.sidebar.isAncestorOf(press(harness, Qt.Key.Key_F6))


# -- many tabs ---------------------------------------------------------------------------------


def open_titled_tabs(harness: Any, count: int) -> list[Any]:
    window = harness.window

    async def make() -> None:
        for i in range(count):
            info = await harness.engine.sessions.new_session()
            await harness.engine.sessions.rename_session(
                info.id, f"Topic {i:02d}: planning the vegetable garden"
            )
            await window.session_tabs.open(info.id, focus=True)

    harness.run(make(), timeout=120000)
    harness.qtbot.waitUntil(lambda: window.tabs.count() == count, timeout=TIMEOUT)
    return window.tabs.tabs()


def test_thirty_tabs_scroll_with_readable_titles_and_the_list_reaches_each(harness: Any) -> None:
    window = harness.open()
    tabs = open_titled_tabs(harness, 30)
    bar = window.tabs.tabBar()
    harness.qtbot.waitUntil(lambda: all(t.title.startswith("Topic") for t in tabs), timeout=TIMEOUT)
    QApplication.processEvents()

    prefix = bar.fontMetrics().horizontalAdvance("Topic 00: plan")
    for i in range(bar.count()):
        width = bar.tabRect(i).width()
        assert width >= min(bar.tabSizeHint(i).width(), READABLE_TAB_WIDTH), f"tab {i} shrank to {width}px"
        assert width >= prefix, f"tab {i} cannot show 'Topic NN: plan' in {width}px"
    arrows = [b for b in bar.findChildren(QToolButton) if b.arrowType() != Qt.ArrowType.NoArrow]
    assert any(b.isVisible() for b in arrows), "the bar scrolls (its arrows are shown)"

    # The list, opened from the keyboard, names every tab in order and activates the one chosen.
    for target in (0, 17, 29):
        offered: list[str] = []

        def choose(index: int = target, offered: list[str] = offered) -> None:
            menu = QApplication.activePopupWidget()
            if not isinstance(menu, QMenu):
                QTimer.singleShot(10, lambda: choose(index, offered))
                return
            entries = [a for a in menu.actions() if not a.isSeparator()]
            offered.extend(a.text() for a in entries)
            menu.setActiveAction(entries[index])
            QTest.keyClick(menu, Qt.Key.Key_Return)

        QTimer.singleShot(0, choose)
        activate(harness, window)
        harness.qtbot.keyClick(focused(), Qt.Key.Key_A, CTRL | SHIFT)
        harness.qtbot.waitUntil(lambda i=target: window.tabs.current_tab() is tabs[i], timeout=TIMEOUT)
        assert offered == [t.title for t in tabs]
        tab = tabs[target]
        harness.qtbot.waitUntil(
            lambda i=target: bar.rect().contains(bar.tabRect(i).center()), timeout=TIMEOUT
        )
        # The window's focus widget (offscreen Qt leaves no window active after a popup closes).
        harness.qtbot.waitUntil(lambda t=tab: window.focusWidget() is t.composer.edit, timeout=TIMEOUT)


def test_a_title_with_an_ampersand_is_listed_as_written(harness: Any) -> None:
    window = harness.open()
    tab = new_tab_by_shortcut(harness)
    harness.run(harness.engine.sessions.rename_session(tab.session_id, "Salt & pepper"))
    harness.qtbot.waitUntil(lambda: tab.title == "Salt & pepper", timeout=TIMEOUT)
    window.tabs._fill_tab_list()
    action = window.tabs.tab_list_menu.actions()[0]
    assert action.text() == "Salt && pepper"  # shown as "Salt & pepper", not a mnemonic


# -- the shortcuts sheet ----------------------------------------------------------------------------


def activate(harness: Any, window: QWidget) -> None:
    """Make ``window`` the active one again (offscreen Qt activates none after a popup or dialog closes)."""
    window.activateWindow()
    harness.qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: QApplication.focusWidget() is not None, timeout=TIMEOUT)


def open_sheet(harness: Any) -> Any:
    window = harness.window
    activate(harness, window)
    harness.qtbot.keyClick(focused(), Qt.Key.Key_Slash, CTRL)
    harness.qtbot.waitUntil(
        lambda: getattr(window, "shortcuts_sheet", None) is not None and window.shortcuts_sheet.isVisible(),
        timeout=TIMEOUT,
    )
    sheet = window.shortcuts_sheet
    activate(harness, sheet)
    harness.qtbot.waitUntil(lambda: focused() is sheet.filter, timeout=TIMEOUT)
    return sheet


def close_sheet(harness: Any, sheet: Any) -> None:
    harness.qtbot.keyClick(focused(), Qt.Key.Key_Escape)
    harness.qtbot.waitUntil(lambda: not sheet.isVisible(), timeout=TIMEOUT)


def test_ctrl_slash_lists_the_bound_keys_and_a_new_action_appears(harness: Any) -> None:
    window = harness.open()
    new_tab_by_shortcut(harness)
    sheet = open_sheet(harness)
    rows = sheet.rows()
    assert ("File", "Close Tab") in [r[:2] for r in rows]
    assert any(r[1] == "Close Tab" and "Ctrl+W" in r[2] for r in rows)
    assert ("View", "Next Pane", "F6") in rows
    assert ("Help", "Keyboard Shortcuts", "Ctrl+/") in rows
    assert any(r[0] == "Composer" and r[1] == "Send the message" for r in rows)
    assert any(r[0].startswith("Messages") and r[1] == "Copy" and "C" in r[2].split(", ") for r in rows)
    assert all(r[2] for r in rows), "every row shows its keys"

    QTest.keyClicks(sheet.filter, "pane")
    assert {r[1] for r in sheet.rows()} == {"Next Pane", "Previous Pane"}
    close_sheet(harness, sheet)

    added = QAction("Summarise Chat", window)
    added.setShortcut(QKeySequence("Ctrl+Alt+S"))
    window.addAction(added)
    sheet = open_sheet(harness)
    keys = QKeySequence("Ctrl+Alt+S").toString(QKeySequence.SequenceFormat.NativeText)
    assert ("Window", "Summarise Chat", keys) in sheet.rows()
    close_sheet(harness, sheet)


def test_the_sheet_names_keys_as_printed_and_lists_no_row_that_follows_the_selection(harness: Any) -> None:
    from tests.support.ui_driving import open_with_stored_chats

    open_with_stored_chats(harness, {"c1": ("First", "q1"), "c2": ("Second", "q2")})
    sidebar = harness.window.sidebar
    listed = [sidebar.model.index_of("c1"), sidebar.model.index_of("c2")]
    view = sidebar.list
    harness.qtbot.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(listed[0]).center()
    )
    harness.qtbot.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, CTRL, pos=view.visualRect(listed[1]).center()
    )
    seen: list[str] = []

    def close_menu() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(10, close_menu)
            return
        seen.extend(a.text() for a in menu.actions())
        menu.close()

    QTimer.singleShot(0, close_menu)
    view.customContextMenuRequested.emit(view.visualRect(listed[1]).center())  # a right click
    assert "Delete 2 chats" in seen

    sheet = open_sheet(harness)
    shown = sheet.rows()
    assert not any(any(ch.isdigit() for ch in r[1]) for r in shown)  # no "Delete 2 chats"
    keys = ", ".join(r[2] for r in shown)
    for internal in ("Backtab", "Zoom In", "Zoom Out", "Find,"):
        assert internal not in keys + ","
    assert ("View", "Previous Tab") in [r[:2] for r in shown]
    assert next(r[2] for r in shown if r[1] == "Previous Tab").startswith("Ctrl+Shift+Tab")
    assert ("Menus", "Open the File menu", "Alt+F") in shown
    assert not any("underlined" in r[1] for r in shown)
    close_sheet(harness, sheet)
