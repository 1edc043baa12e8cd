"""Deleting (and undoing), editing a reply and copying as Markdown, driven as a person would,
with the real Engine on a SQLite file and replies from the replay server."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent, QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import click_action, texts, type_and_send, wait_idle
from tests.support.ui_driving import new_tab_by_click as new_tab

TIMEOUT = 15000


def reply(text: str) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4)))


def chat_of_two_turns(harness: Any) -> Any:
    harness.server.enqueue(reply("Alpha answer."), reply("Zebrafish answer."))
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "first question")
    wait_idle(harness, tab)
    type_and_send(harness.qtbot, tab, "second question")
    wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: tab.model.rowCount() == 4, timeout=TIMEOUT)
    return tab


def choose_from_menu(qtbot: Any, object_name: str) -> None:
    """Once the context menu shows, click its entry ``object_name`` (as a person would)."""

    def click_entry() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(10, click_entry)
            return
        entry = next(a for a in menu.actions() if a.objectName() == object_name)
        QTest.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(entry).center())

    QTimer.singleShot(0, click_entry)


def right_click_message(qtbot: Any, tab: Any, message_id: str) -> None:
    view = tab.view
    geo = next(g for g in view._visible if g.message_id == message_id)
    pos = QPoint(int(geo.doc_rect.center().x()), int(geo.doc_rect.center().y()))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.RightButton, pos=pos)
    # The platform follows a right click with a context-menu event; QTest does not send one.
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)


def test_delete_from_the_menu_then_undo_brings_the_same_messages_back(harness: Any) -> None:
    tab = chat_of_two_turns(harness)
    before = [m.id for m in tab.live.conversation.path()]
    second = before[2]
    assert tab.view.bring_into_view(second)

    choose_from_menu(harness.qtbot, "message-action-delete")
    right_click_message(harness.qtbot, tab, second)

    harness.qtbot.waitUntil(lambda: tab.model.rowCount() == 2, timeout=TIMEOUT)
    assert texts(tab) == ["first question", "Alpha answer."]
    assert tab.undo_bar.isVisible()
    assert tab.undo_bar.label.text() == "Message and 1 below it deleted"

    harness.qtbot.mouseClick(tab.undo_bar.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.model.rowCount() == 4, timeout=TIMEOUT)
    assert [m.id for m in tab.live.conversation.path()] == before
    assert not tab.undo_bar.isVisible()
    assert tab.view.current_message_id() == second


def test_the_delete_key_deletes_the_current_message_for_good(harness: Any) -> None:
    tab = chat_of_two_turns(harness)
    last = tab.live.conversation.path()[-1]
    tab.view.setFocus()
    assert tab.view.set_current_message(last.id)
    harness.qtbot.keyClick(tab.view, Qt.Key.Key_Delete)
    harness.qtbot.waitUntil(lambda: tab.model.rowCount() == 3, timeout=TIMEOUT)
    assert tab.undo_bar.label.text() == "Message deleted"
    harness.run(harness.engine.messages.purge())  # the undo window ends
    assert harness.run(harness.engine.library.search("Zebrafish")) == []
    harness.qtbot.mouseClick(tab.undo_bar.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.banner.isVisible(), timeout=TIMEOUT)
    assert "Too late to undo" in tab.banner.error.message
    assert tab.model.rowCount() == 3


def test_edit_a_reply_in_the_editor_adds_version_two_and_the_next_request_carries_it(harness: Any) -> None:
    harness.server.enqueue(reply("The capital is Lyon."), reply("Noted."))
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Capital of France?")
    wait_idle(harness, tab)
    answer = tab.live.conversation.path()[-1]
    click_action(harness.qtbot, tab, answer.id, "edit")
    assert tab.composer.editing == answer.id
    assert tab.composer.text() == "The capital is Lyon."
    assert "nothing is sent" in tab.composer.edit_banner.text()
    tab.composer.edit.selectAll()
    harness.qtbot.keyClicks(tab.composer.edit, "The capital is Paris.")
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)

    harness.qtbot.waitUntil(lambda: texts(tab)[-1] == "The capital is Paris.", timeout=TIMEOUT)
    edited = tab.live.conversation.path()[-1]
    assert edited.id != answer.id and edited.metadata is not None and edited.metadata.edited
    harness.qtbot.waitUntil(lambda: tab.view.version_text(edited.id) == "2 / 2", timeout=TIMEOUT)
    # The box empties once the engine has stored the version (its callback may come a beat later).
    harness.qtbot.waitUntil(
        lambda: tab.composer.text() == "" and tab.composer.editing is None, timeout=TIMEOUT
    )
    assert len(harness.server.requests) == 1  # saving the edit sent nothing

    type_and_send(harness.qtbot, tab, "And Italy?")
    wait_idle(harness, tab)
    sent = harness.server.requests[-1].body["messages"]
    assert [m["content"] for m in sent if m["role"] == "assistant"] == ["The capital is Paris."]


def test_copy_a_message_and_the_conversation_as_markdown_from_the_keyboard(harness: Any) -> None:
    harness.server.enqueue(reply("Use **this**:\n\n```py\nprint(1)\n```\n"))
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Show code")
    wait_idle(harness, tab)
    answer = tab.live.conversation.path()[-1]
    clipboard = QGuiApplication.clipboard()
    clipboard.clear()
    tab.view.setFocus()
    assert tab.view.set_current_message(answer.id)
    harness.qtbot.keyClick(tab.view, Qt.Key.Key_M)
    assert clipboard.text() == "Use **this**:\n\n```py\nprint(1)\n```\n"

    harness.qtbot.keyClick(tab.view, Qt.Key.Key_M, Qt.KeyboardModifier.ShiftModifier)
    harness.qtbot.waitUntil(lambda: clipboard.text().startswith("# Show code"), timeout=TIMEOUT)
    assert "## You\n\nShow code" in clipboard.text()
    assert "```py\nprint(1)\n```" in clipboard.text()
