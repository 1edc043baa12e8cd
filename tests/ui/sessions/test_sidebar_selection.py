"""Several chats selected in the sidebar (Ctrl+click, Shift+click, Ctrl+A) and the menu acting on
them: each entry changes exactly the selected chats and nothing else; Delete has one Undo for all."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu
from tests.support.ui_driving import open_with_stored_chats
from tests.ui.conftest import AppHarness

from threadline.core.session import SessionInfo

TIMEOUT = 15000
IDS = [f"chat{n}" for n in range(6)]


def open_with_chats(harness: AppHarness) -> None:
    open_with_stored_chats(harness, {sid: (f"Topic {n}", f"about topic {n}") for n, sid in enumerate(IDS)})


def row_point(harness: AppHarness, session_id: str) -> QPoint:
    view = harness.window.sidebar.list
    index = harness.window.sidebar.model.index_of(session_id)
    view.scrollTo(index)
    return view.visualRect(index).center()


def click(
    harness: AppHarness, session_id: str, modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
) -> None:
    view = harness.window.sidebar.list
    harness.qtbot.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, modifier, row_point(harness, session_id)
    )


def choose(harness: AppHarness, session_id: str, text: str) -> list[str]:
    """Right-click the chat's row and choose ``text`` from its menu with the keyboard."""
    view = harness.window.sidebar.list
    offered: list[str] = []

    def pick() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(10, pick)
            return
        entries = [a for a in menu.actions() if not a.isSeparator()]
        offered.extend(a.text() for a in entries)
        action = next((a for a in entries if a.text() == text), None)
        if action is None:
            menu.close()
            return
        menu.setActiveAction(action)
        QTest.keyClick(menu, Qt.Key.Key_Return)

    QTimer.singleShot(0, pick)
    pos = row_point(harness, session_id)
    QApplication.sendEvent(
        view.viewport(),
        QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.viewport().mapToGlobal(pos)),
    )
    return offered


def everything(harness: AppHarness) -> dict[str, SessionInfo]:
    async def read() -> dict[str, SessionInfo]:
        found = {}
        for sid in IDS:
            info = await harness.engine.store.get_session(sid)
            if info is not None:
                found[sid] = info
        return found

    result: dict[str, SessionInfo] = harness.run(read())
    return result


def select(harness: AppHarness, first: str, *more: str) -> None:
    click(harness, first)
    harness.qtbot.waitUntil(lambda: harness.window.tabs.tab_for(first) is not None, timeout=TIMEOUT)
    for sid in more:
        click(harness, sid, Qt.KeyboardModifier.ControlModifier)
    assert sorted(harness.window.sidebar.selected_ids()) == sorted((first, *more))


def only_these_changed(
    before: dict[str, SessionInfo], after: dict[str, SessionInfo], changed: set[str]
) -> None:
    assert {sid for sid in before if before[sid] != after.get(sid)} == changed


def test_ctrl_and_shift_click_select_without_opening_and_ctrl_a_selects_every_loaded_chat(
    harness: AppHarness,
) -> None:
    open_with_chats(harness)
    sidebar = harness.window.sidebar
    click(harness, "chat1")
    harness.qtbot.waitUntil(lambda: harness.window.tabs.tab_for("chat1") is not None, timeout=TIMEOUT)
    click(harness, "chat3", Qt.KeyboardModifier.ControlModifier)
    assert sorted(sidebar.selected_ids()) == ["chat1", "chat3"]
    assert harness.window.tabs.tab_for("chat3") is None, "Ctrl+click selects, it does not open"
    click(harness, "chat1")
    click(harness, "chat4", Qt.KeyboardModifier.ShiftModifier)
    low, high = sorted((sidebar.model.index_of("chat1").row(), sidebar.model.index_of("chat4").row()))
    expected = {s for s in IDS if low <= sidebar.model.index_of(s).row() <= high}
    assert set(sidebar.selected_ids()) == expected and len(expected) == 4
    assert harness.window.tabs.tab_for("chat4") is None
    sidebar.list.setFocus()
    QTest.keyClick(sidebar.list, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert sorted(sidebar.selected_ids()) == sorted(IDS)


def test_pin_and_unpin_change_exactly_the_selected_chats(harness: AppHarness) -> None:
    open_with_chats(harness)
    select(harness, "chat2", "chat5")
    before = everything(harness)
    offered = choose(harness, "chat5", "Pin 2 chats")
    assert offered == [
        "Export 2 chats…",
        "Pin 2 chats",
        "Move to project",
        "Archive 2 chats",
        "Delete 2 chats",
    ]
    harness.qtbot.waitUntil(
        lambda: everything(harness)["chat2"].pinned and everything(harness)["chat5"].pinned, timeout=TIMEOUT
    )
    after = everything(harness)
    only_these_changed(before, after, {"chat2", "chat5"})
    harness.qtbot.waitUntil(lambda: sidebar_pinned(harness) == {"chat2", "chat5"}, timeout=TIMEOUT)
    select(harness, "chat2", "chat5")
    choose(harness, "chat2", "Unpin 2 chats")
    harness.qtbot.waitUntil(lambda: not any(i.pinned for i in everything(harness).values()), timeout=TIMEOUT)


def sidebar_pinned(harness: AppHarness) -> set[str]:
    model = harness.window.sidebar.model
    return {sid for sid in IDS if (info := model.session(sid)) is not None and info.pinned}


def test_archive_changes_exactly_the_selected_chats_and_one_undo_brings_them_back(
    harness: AppHarness,
) -> None:
    open_with_chats(harness)
    select(harness, "chat0", "chat3", "chat4")
    before = everything(harness)
    choose(harness, "chat3", "Archive 3 chats")
    harness.qtbot.waitUntil(
        lambda: {s for s, i in everything(harness).items() if i.archived} == {"chat0", "chat3", "chat4"},
        timeout=TIMEOUT,
    )
    only_these_changed(before, everything(harness), {"chat0", "chat3", "chat4"})
    sidebar = harness.window.sidebar
    assert sidebar.undo_bar.isVisible() and sidebar.undo_bar.label.text() == "Archived 3 chats"
    harness.qtbot.mouseClick(sidebar.undo_bar.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(
        lambda: not any(i.archived for i in everything(harness).values()), timeout=TIMEOUT
    )


def test_delete_removes_exactly_the_selected_chats_with_one_undo_for_all(harness: AppHarness) -> None:
    open_with_chats(harness)
    select(harness, "chat1", "chat2", "chat5")
    choose(harness, "chat2", "Delete 3 chats")
    sidebar = harness.window.sidebar
    harness.qtbot.waitUntil(
        lambda: sorted(harness.engine.sessions.pending_deletes()) == ["chat1", "chat2", "chat5"],
        timeout=TIMEOUT,
    )
    assert not any(sidebar.model.index_of(s).isValid() for s in ("chat1", "chat2", "chat5"))
    assert all(sidebar.model.index_of(s).isValid() for s in ("chat0", "chat3", "chat4"))
    assert sidebar.undo_bar.label.text() == "Deleted 3 chats"
    harness.qtbot.mouseClick(sidebar.undo_bar.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: harness.engine.sessions.pending_deletes() == [], timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: all(sidebar.model.index_of(s).isValid() for s in IDS), timeout=TIMEOUT)
    assert set(everything(harness)) == set(IDS)


def test_the_delete_key_deletes_every_selected_chat(harness: AppHarness) -> None:
    open_with_chats(harness)
    select(harness, "chat0", "chat4")
    harness.window.sidebar.list.setFocus()
    QTest.keyClick(harness.window.sidebar.list, Qt.Key.Key_Delete)
    harness.qtbot.waitUntil(
        lambda: sorted(harness.engine.sessions.pending_deletes()) == ["chat0", "chat4"], timeout=TIMEOUT
    )


def test_export_asks_for_the_selected_chats(harness: AppHarness) -> None:
    open_with_chats(harness)
    select(harness, "chat3", "chat1")
    asked: list[Any] = []
    harness.window.sidebar.exportRequested.connect(asked.append)

    def close_export_dialog() -> None:  # the window opens its export dialog: cancel it
        dialog = QApplication.activeModalWidget()
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(10, close_export_dialog)
            return
        dialog.reject()

    QTimer.singleShot(0, close_export_dialog)
    choose(harness, "chat1", "Export 2 chats…")
    harness.qtbot.waitUntil(lambda: bool(asked), timeout=TIMEOUT)
    assert sorted(asked[0]) == ["chat1", "chat3"]
