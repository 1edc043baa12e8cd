"""The chat view through Qt's accessibility API, as a screen reader's bridge reads it.

Everything is asked through ``QAccessible.queryAccessibleInterface`` and the interfaces it
returns (roles, texts, states, ``actionInterface()``), never through the view's Python
methods, so a message missing from the accessible tree fails here. Events are observed at
``QAccessible.updateAccessibility``, the one door every accessibility event goes through
on its way to the platform bridge.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent, QAccessibleEvent, QAccessibleInterface
from tests.support.ui_fakes import FakeLive
from tests.support.waiting import WAIT_MS

from threadline.engine.events import MessageChanged
from threadline.ui.chat.view.chat_accessibility import MessageItem
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.message_keys import COMMANDS


@dataclass(frozen=True)
class SeenEvent:
    kind: QAccessible.Event
    name: str
    """The accessible name of the event's subject."""
    announcement: str = ""


@pytest.fixture
def a11y_events(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[SeenEvent]]:
    """Every accessibility event the app sends, recorded (then passed on to Qt as usual)."""
    seen: list[SeenEvent] = []
    original = QAccessible.updateAccessibility

    def record(event: QAccessibleEvent) -> None:
        iface = event.accessibleInterface()
        name = iface.text(QAccessible.Text.Name) if iface is not None else ""
        text = event.message() if isinstance(event, QAccessibleAnnouncementEvent) else ""
        seen.append(SeenEvent(event.type(), name, text))
        original(event)

    monkeypatch.setattr(QAccessible, "updateAccessibility", staticmethod(record))
    yield seen


def make(qtbot: Any, live: FakeLive) -> tuple[ConversationModel, ChatView]:
    model = ConversationModel(live)
    view = ChatView()
    view.setModel(model)
    view.resize(700, 500)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    return model, view


def tree(view: ChatView) -> QAccessibleInterface:
    iface = QAccessible.queryAccessibleInterface(view)
    assert iface is not None
    return iface


def children(view: ChatView) -> list[QAccessibleInterface]:
    root = tree(view)
    return [root.child(i) for i in range(root.childCount())]


def test_every_message_is_a_list_item_with_author_time_and_text(qtbot: Any) -> None:
    live = FakeLive()
    prompt, reply = live.exchange("What is the capital of France?", "Paris is the capital of France.")
    live.user_says("And of Italy?")
    live.begin(model="gpt-test")
    live.delta("Rome")
    _model, view = make(qtbot, live)

    root = tree(view)
    assert root.role() == QAccessible.Role.List
    assert root.childCount() == 4
    items = children(view)
    assert [i.role() for i in items] == [QAccessible.Role.ListItem] * 4
    descriptions = [i.text(QAccessible.Text.Description) for i in items]
    assert descriptions == [
        "What is the capital of France?",
        "Paris is the capital of France.",
        "And of Italy?",
        "Rome",
    ]
    names = [i.text(QAccessible.Text.Name) for i in items]
    hhmm = prompt.created_at.astimezone().strftime("%H:%M")
    assert names[0] == f"You, {hhmm}"
    assert names[1].startswith("test-model, ")
    assert names[3].startswith("gpt-test, ") and names[3].endswith(", Streaming…")
    assert items[3].state().busy and not items[1].state().busy
    for index, item in enumerate(items):
        assert root.indexOfChild(item) == index
        assert item.parent() is not None and item.parent().object() is view
        assert item.isValid()
    # A message that shows has a place on the screen inside the view.
    view_rect = root.rect()
    assert view_rect.contains(items[1].rect().center())
    assert reply.id  # (the reply is the second item)


def test_each_message_offers_its_actions_with_the_keys_its_menu_shows(qtbot: Any) -> None:
    live = FakeLive()
    live.exchange("first", "an answer")
    _model, view = make(qtbot, live)
    prompt_item, reply_item = children(view)

    prompt_actions = prompt_item.actionInterface()
    reply_actions = reply_item.actionInterface()
    assert prompt_actions is not None and reply_actions is not None
    after = ["Copy as Markdown", "Copy conversation as Markdown", "Start tangent from here"]
    after += ["Set checkpoint here…", "Delete", "SetFocus", "ShowMenu"]
    assert prompt_actions.actionNames() == ["Copy", "Select text", "Edit", *after]
    read_aloud = [*after[:2], "Read aloud", *after[2:]]  # a reply (not a prompt) can be read aloud
    assert reply_actions.actionNames() == ["Copy", "Select text", "Edit", "Regenerate", *read_aloud]
    assert reply_actions.keyBindingsForAction("Read aloud") == ["A"]
    assert reply_actions.keyBindingsForAction("Regenerate") == [COMMANDS["regenerate"].shortcut.toString()]
    assert prompt_actions.keyBindingsForAction("Edit") == ["E"]
    # Through C++'s interface_cast: no other interface, and a null pointer (not a crash).
    assert reply_item.valueInterface() is None and reply_item.textInterface() is None

    with qtbot.waitSignal(view.actionTriggered, timeout=WAIT_MS) as fired:
        reply_actions.doAction("Regenerate")
    assert fired.args == ["regenerate", reply_item.object().message_id]  # type: ignore[attr-defined]

    reply_actions.doAction("SetFocus")
    assert view.current_message_id() == reply_item.object().message_id  # type: ignore[attr-defined]


def test_actions_follow_the_turn_a_streaming_reply_cannot_be_regenerated(qtbot: Any) -> None:
    live = FakeLive()
    live.exchange("one", "two")
    live.user_says("three")
    live.begin()
    live.delta("partial")
    model, view = make(qtbot, live)
    names = [i.actionInterface().actionNames() for i in children(view)]
    assert "Regenerate" not in names[1] and "Regenerate" not in names[3]  # a turn is running
    assert "Edit" not in names[0]
    live.finish()
    model.flush()
    names = [i.actionInterface().actionNames() for i in children(view)]
    assert "Regenerate" in names[3] and "Edit" in names[2]


def test_versions_are_actions_and_the_tree_follows_a_switch(qtbot: Any) -> None:
    live = FakeLive()
    _prompt, first = live.exchange("pick a number", "seven")
    live.conversation.regenerate(first.id)
    live.begin()
    live.delta("eleven")
    live.finish()
    _model, view = make(qtbot, live)
    second = children(view)[1]
    assert second.text(QAccessible.Text.Description) == "eleven"
    actions = second.actionInterface()
    assert {"Previous version", "Next version"} <= set(actions.actionNames())
    assert actions.keyBindingsForAction("Previous version") == ["Left"]

    live.switch_version(first.id, 0)  # what the engine does after the view asks for a switch
    assert [i.text(QAccessible.Text.Description) for i in children(view)] == ["pick a number", "seven"]


def test_moving_between_messages_sends_focus_for_the_message(
    qtbot: Any, a11y_events: list[SeenEvent]
) -> None:
    live = FakeLive()
    for i in range(3):
        live.exchange(f"question {i}", f"answer {i}")
    _model, view = make(qtbot, live)
    view.setFocus()
    qtbot.waitUntil(view.hasFocus, timeout=WAIT_MS)
    items = children(view)
    assert view.current_message_id() == items[-1].object().message_id  # type: ignore[attr-defined]
    assert tree(view).focusChild() is not None
    assert tree(view).focusChild().text(QAccessible.Text.Name) == items[-1].text(QAccessible.Text.Name)
    a11y_events.clear()

    qtbot.keyClick(view, Qt.Key.Key_Up)

    focus = [e for e in a11y_events if e.kind == QAccessible.Event.Focus]
    assert focus == [SeenEvent(QAccessible.Event.Focus, items[-2].text(QAccessible.Text.Name))]
    assert items[-2].state().focused and items[-2].state().selected
    assert not items[-1].state().focused


def test_a_finished_reply_is_announced_once_not_per_token(qtbot: Any, a11y_events: list[SeenEvent]) -> None:
    live = FakeLive()
    live.exchange("hi", "hello")  # history: never announced
    model, view = make(qtbot, live)
    live.user_says("Tell me a fact")
    live.begin(model="gpt-test")
    for word in ("Honey ", "never ", "spoils."):
        live.delta(word)
        model.flush()
        view.viewport().repaint()
    assert not [e for e in a11y_events if e.kind == QAccessible.Event.Announcement]

    reply = live.finish()
    model.flush()
    live.emit(MessageChanged(live.session_id, reply))  # the engine may report a finished reply again

    announcements = [e for e in a11y_events if e.kind == QAccessible.Event.Announcement]
    assert len(announcements) == 1, announcements
    assert announcements[0].announcement == "gpt-test replied: Honey never spoils."
    assert announcements[0].name.startswith("gpt-test, ")
    assert not announcements[0].name.endswith("Streaming…")  # the item says it is complete now
    changed = [
        e.kind
        for e in a11y_events
        if e.kind in (QAccessible.Event.NameChanged, QAccessible.Event.DescriptionChanged)
    ]
    assert changed == [QAccessible.Event.NameChanged, QAccessible.Event.DescriptionChanged]  # once each


def test_a_stopped_reply_says_so_in_its_announcement_and_name(
    qtbot: Any, a11y_events: list[SeenEvent]
) -> None:
    live = FakeLive()
    model, view = make(qtbot, live)
    live.user_says("Count to a million")
    live.begin(model="gpt-test")
    live.delta("1, 2, 3")
    live.cancel()
    model.flush()
    announcements = [e.announcement for e in a11y_events if e.kind == QAccessible.Event.Announcement]
    assert announcements == ["gpt-test replied (Stopped): 1, 2, 3"]
    assert children(view)[1].text(QAccessible.Text.Name).endswith(", Stopped")


def test_items_of_messages_that_left_the_view_are_let_go(qtbot: Any) -> None:
    live = FakeLive()
    _prompt, first = live.exchange("pick a number", "seven")
    live.conversation.regenerate(first.id)
    live.begin()
    live.delta("eleven")
    live.finish()
    _model, view = make(qtbot, live)
    old_item = children(view)[1].object()
    assert isinstance(old_item, MessageItem)
    old_id = old_item.message_id
    live.switch_version(first.id, 0)
    kept = [item.message_id for item in view.accessible_items.findChildren(MessageItem)]
    assert old_id not in kept
    assert children(view)[1].text(QAccessible.Text.Description) == "seven"
