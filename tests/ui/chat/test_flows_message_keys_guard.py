"""The single-letter message keys after a click in the conversation, typed as a person does.

A click in the conversation (to read, to scroll) gave it the keyboard, and the next
sentence typed there edited (E), regenerated (R) or deleted (Del) instead of being
written. Now the letters act only on a message the keyboard chose (an arrow key, Tab);
after a click, typing goes to the message box and Del does nothing (issue 28)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_click, texts, type_and_send, wait_idle

TIMEOUT = 15000


def chat_of_two_turns(harness: Any) -> Any:
    harness.server.enqueue(*(sse_response(openai_text_stream(split_text(t, 4))) for t in ("Alpha.", "Beta.")))
    harness.open()
    tab = new_tab_by_click(harness)
    for question in ("first question", "second question"):
        type_and_send(harness.qtbot, tab, question)
        wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: tab.model.rowCount() == 4, timeout=TIMEOUT)
    return tab


def click_text_of(harness: Any, tab: Any, message_id: str) -> None:
    view = tab.view
    view.visible_message_ids()
    geo = next(g for g in view._visible if g.message_id == message_id)
    pos = QPoint(int(geo.doc_rect.left()) + 4, int(geo.doc_rect.center().y()))
    harness.qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    harness.qtbot.waitUntil(view.hasFocus, timeout=TIMEOUT)


def type_keys(harness: Any, text: str) -> None:
    """Type as a keyboard does: each key goes to whatever has the focus at that moment."""
    for char in text:
        harness.qtbot.keyClicks(QApplication.focusWidget(), char)


def test_a_sentence_typed_after_a_click_in_the_conversation_goes_to_the_message_box(harness: Any) -> None:
    tab = chat_of_two_turns(harness)
    before = texts(tab)
    reply = tab.live.conversation.path()[-1]
    click_text_of(harness, tab, reply.id)
    type_keys(harness, "Rewrite the ending please")
    assert tab.composer.text() == "Rewrite the ending please"
    assert tab.composer.edit.hasFocus()
    assert tab.composer.editing is None
    assert texts(tab) == before and len(harness.server.requests) == 2


def test_del_after_a_click_deletes_nothing_and_after_an_arrow_key_offers_undo(harness: Any) -> None:
    tab = chat_of_two_turns(harness)
    before = texts(tab)
    reply = tab.live.conversation.path()[-1]
    click_text_of(harness, tab, reply.id)
    with harness.qtbot.assertNotEmitted(tab.view.actionTriggered):  # the delete would start here
        harness.qtbot.keyClick(tab.view, Qt.Key.Key_Delete)
    assert texts(tab) == before and not tab.undo_bar.isVisible()

    harness.qtbot.keyClick(tab.view, Qt.Key.Key_Up)  # the keyboard chooses a message
    harness.qtbot.keyClick(tab.view, Qt.Key.Key_Down)
    assert tab.view.current_message_id() == reply.id
    harness.qtbot.keyClick(tab.view, Qt.Key.Key_Delete)
    harness.qtbot.waitUntil(lambda: tab.model.rowCount() == 3, timeout=TIMEOUT)
    assert tab.undo_bar.isVisible() and tab.undo_bar.label.text() == "Message deleted"
    harness.qtbot.mouseClick(tab.undo_bar.button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: texts(tab) == before, timeout=TIMEOUT)


def test_letter_keys_act_once_an_arrow_key_chose_the_message(harness: Any) -> None:
    """The keys stay for the keyboard: an arrow key after the click, then E edits."""
    tab = chat_of_two_turns(harness)
    prompt = tab.live.conversation.path()[-2]
    click_text_of(harness, tab, prompt.id)
    harness.qtbot.keyClick(tab.view, Qt.Key.Key_Down)
    harness.qtbot.keyClick(tab.view, Qt.Key.Key_Up)
    assert tab.view.current_message_id() == prompt.id
    harness.qtbot.keyClick(tab.view, Qt.Key.Key_E)
    assert tab.composer.editing == prompt.id
