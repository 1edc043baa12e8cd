"""The chat view from the keyboard: the current message, its focus ring, its keys and its menu."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import QApplication, QMenu
from tests.support.ui_fakes import FakeLive

from threadline.ui.chat.view import view_layout
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.message_keys import COMMANDS
from threadline.ui.common.theme import LIGHT

TIMEOUT = 15000


def make(qtbot: Any, live: FakeLive, height: int = 500) -> tuple[ConversationModel, ChatView]:
    model = ConversationModel(live)
    view = ChatView()
    view.setModel(model)
    view.resize(700, height)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    view.setFocus()
    qtbot.waitUntil(view.hasFocus, timeout=TIMEOUT)
    return model, view


def ids(live: FakeLive) -> list[str]:
    return [m.id for m in live.conversation.path()]


def fully_visible(view: ChatView, message_id: str) -> bool:
    view.visible_message_ids()  # lays out the rows that show
    geo = next((g for g in view._visible if g.message_id == message_id), None)
    vh = view.viewport().height()
    return geo is not None and geo.top >= 0 and (geo.top + geo.height <= vh or geo.top == 0)


def test_arrows_and_j_k_move_the_current_message_and_scroll_it_into_view(qtbot: Any) -> None:
    live = FakeLive()
    for i in range(25):
        live.exchange(f"question {i}", f"answer {i}\n\nwith a second paragraph")
    _model, view = make(qtbot, live, height=300)
    order = ids(live)
    assert view.current_message_id() == order[-1]  # focus starts at the latest message

    qtbot.keyClick(view, Qt.Key.Key_Up)
    assert view.current_message_id() == order[-2]
    qtbot.keyClick(view, Qt.Key.Key_K)
    assert view.current_message_id() == order[-3]
    qtbot.keyClick(view, Qt.Key.Key_J)
    assert view.current_message_id() == order[-2]

    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.current_message_id() == order[0]
    assert fully_visible(view, order[0]) and not view.following
    for step in range(1, 12):
        qtbot.keyClick(view, Qt.Key.Key_Down)
        assert view.current_message_id() == order[step]
        assert fully_visible(view, order[step]), f"message {step} was left out of view"
    for step in range(10, 3, -1):
        qtbot.keyClick(view, Qt.Key.Key_Up)
        assert fully_visible(view, order[step])

    qtbot.keyClick(view, Qt.Key.Key_End)
    assert view.current_message_id() == order[-1]
    assert view.following  # End follows new content again
    qtbot.keyClick(view, Qt.Key.Key_Down)  # past the end: stays
    assert view.current_message_id() == order[-1]


def test_the_current_message_has_a_focus_ring_only_while_the_view_has_the_focus(qtbot: Any) -> None:
    live = FakeLive()
    live.exchange("one", "two")
    _model, view = make(qtbot, live)
    view.set_colors(LIGHT)

    def ring_pixels() -> int:
        image = view.viewport().grab().toImage()
        x = view_layout.content_left(view.viewport().width()) - 8  # FOCUS_RING_OUTSET
        accent = QColor(LIGHT.accent)
        hits = 0
        for y in range(image.height()):
            for dx in (-1, 0, 1):
                c = image.pixelColor(x + dx, y)
                if (
                    abs(c.red() - accent.red())
                    + abs(c.green() - accent.green())
                    + abs(c.blue() - accent.blue())
                    < 60
                ):
                    hits += 1
        return hits

    assert ring_pixels() > 20
    view.clearFocus()
    qtbot.waitUntil(lambda: not view.hasFocus(), timeout=TIMEOUT)
    assert ring_pixels() == 0


def test_keys_act_on_the_current_message(qtbot: Any) -> None:
    live = FakeLive()
    prompt, reply = live.exchange("the question", "the answer")
    _model, view = make(qtbot, live)
    assert view.current_message_id() == reply.id

    QGuiApplication.clipboard().clear()
    with qtbot.waitSignal(view.actionTriggered, timeout=TIMEOUT) as copied:
        qtbot.keyClick(view, Qt.Key.Key_C)
    assert copied.args == ["copy", reply.id]
    assert QGuiApplication.clipboard().text() == "the answer"

    with qtbot.waitSignal(view.actionTriggered, timeout=TIMEOUT) as regenerated:
        qtbot.keyClick(view, Qt.Key.Key_R)
    assert regenerated.args == ["regenerate", reply.id]

    qtbot.keyClick(view, Qt.Key.Key_Up)
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "the question"
    with qtbot.waitSignal(view.actionTriggered, timeout=TIMEOUT) as edited:
        qtbot.keyClick(view, Qt.Key.Key_E)
    assert edited.args == ["edit", prompt.id]

    with qtbot.assertNotEmitted(view.actionTriggered):
        qtbot.keyClick(view, Qt.Key.Key_R)  # a prompt is not regenerated
        qtbot.keyClick(view, Qt.Key.Key_Left)  # and has no versions

    qtbot.keyClick(view, Qt.Key.Key_Return)
    browser = view.selection_editor()
    assert browser is not None and browser.isVisible()
    assert browser.toPlainText().strip() == "the question"


def test_left_and_right_switch_versions(qtbot: Any) -> None:
    live = FakeLive()
    _prompt, first = live.exchange("pick a number", "seven")
    live.conversation.regenerate(first.id)
    live.begin()
    live.delta("eleven")
    second = live.finish()
    _model, view = make(qtbot, live)
    assert view.current_message_id() == second.id
    with qtbot.waitSignal(view.actionTriggered, timeout=TIMEOUT) as back:
        qtbot.keyClick(view, Qt.Key.Key_Left)
    assert back.args == ["prev_version", second.id]
    with qtbot.waitSignal(view.actionTriggered, timeout=TIMEOUT) as forward:
        qtbot.keyClick(view, Qt.Key.Key_BracketRight)
    assert forward.args == ["next_version", second.id]

    live.switch_version(second.id, -1)  # the engine's answer to the request
    assert view.current_message_id() == first.id  # the current message follows the switch


def test_the_menu_key_opens_the_current_message_menu_showing_the_keys(qtbot: Any) -> None:
    live = FakeLive()
    _prompt, reply = live.exchange("question", "answer")
    _model, view = make(qtbot, live)
    seen: dict[str, str] = {}

    def read_menu() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(10, read_menu)
            return
        for entry in menu.actions():
            if not entry.isSeparator():
                seen[entry.text()] = entry.shortcut().toString()
        menu.close()

    QTimer.singleShot(0, read_menu)
    qtbot.keyClick(view, Qt.Key.Key_Menu)  # returns when the menu has closed
    assert seen == {
        "Copy": COMMANDS["copy"].shortcut.toString(),
        "Select text": COMMANDS["select_text"].shortcut.toString(),
        "Copy as Markdown": "M",
        "Copy conversation as Markdown": "Shift+M",
        "Edit": "E",
        "Regenerate": "R",
        "Read aloud": "A",
        "Start tangent from here": "T",
        "Set checkpoint here…": "P",
        "Delete": "Del",
    }
    assert seen["Copy"] and seen["Select text"]
    assert view.current_message_id() == reply.id

    seen.clear()
    QTimer.singleShot(0, read_menu)
    qtbot.keyClick(view, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    assert "Regenerate" in seen
