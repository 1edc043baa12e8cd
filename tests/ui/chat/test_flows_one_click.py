"""One click on a message's painted button acts, with the message box holding the keyboard
until then: the press moved the keyboard to the conversation, the view scrolled under the
pointer before the release, and the release fell on the next message (issue 28)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from tests.support.chat_trees import Chat, store_chat
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_click, type_and_send, wait_idle

from threadline.core.messages import Message, MessageStatus
from threadline.core.session import SessionInfo
from threadline.store.repository import Store

TIMEOUT = 15000
LONG = "\n\n".join(f"Paragraph {n} of a long answer, wide enough to wrap once or twice." for n in range(12))


def long_chat(harness: Any, turns: int = 3) -> Any:
    harness.server.enqueue(*[sse_response(openai_text_stream(split_text(LONG, 40))) for _ in range(turns)])
    harness.open()
    tab = new_tab_by_click(harness)
    for n in range(turns):
        type_and_send(harness.qtbot, tab, f"question {n}")
        wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: tab.model.rowCount() == 2 * turns, timeout=TIMEOUT)
    return tab


def click_once(harness: Any, tab: Any, message_id: str, action: str) -> None:
    view = tab.view
    harness.qtbot.waitUntil(lambda: view.action_rect(message_id, action) is not None, timeout=TIMEOUT)
    rect = view.action_rect(message_id, action)
    QTest.mouseMove(view.viewport(), rect.center())
    harness.qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_one_click_on_edit_edits_while_the_message_box_has_the_keyboard(harness: Any) -> None:
    tab = long_chat(harness)
    prompt = tab.live.conversation.path()[2]
    assert tab.view.scroll_to_message(prompt.id, flash=False)  # read back to it: its reply is cut below
    tab.composer.edit.setFocus()
    harness.qtbot.waitUntil(tab.composer.edit.hasFocus, timeout=TIMEOUT)
    top = tab.view.visible_message_ids()[0]
    click_once(harness, tab, prompt.id, "edit")
    assert tab.composer.editing == prompt.id
    assert tab.view.visible_message_ids()[0] == top, "the click did not scroll the conversation"


def test_one_click_on_continue_continues_a_stopped_reply(harness: Any) -> None:
    """Continue on a reply stopped early in the chat, with a long reply cut at the view's bottom."""
    p0 = Message.prompt("first question", id="p0")
    r0 = Message.reply(parent_id="p0", text="A partial answer", status=MessageStatus.CANCELLED, id="r0")
    p1 = Message.prompt("second question", parent_id="r0", id="p1")
    r1 = Message.reply(parent_id="p1", text=LONG, status=MessageStatus.COMPLETE, id="r1")

    async def fill() -> None:
        harness.data_dir.mkdir(parents=True, exist_ok=True)
        store = await Store.open(Store.sqlite_url(harness.data_dir / "threadline.db"))
        try:
            await store_chat(
                store,
                Chat(
                    SessionInfo(id="s1", title="Stopped early", provider="replay", model="gpt-4o-mini"),
                    [p0, r0, p1, r1],
                ),
            )
        finally:
            await store.close()

    harness.run(fill())
    window = harness.open()
    tab = harness.run(window.session_tabs.open("s1", focus=True))
    harness.qtbot.waitUntil(lambda: tab.model.rowCount() == 4, timeout=TIMEOUT)
    assert tab.view.scroll_to_message("p0", flash=False)
    assert "continue" in tab.view.offered_commands("r0")
    harness.server.enqueue(sse_response(openai_text_stream([" and the rest of it."])))
    tab.composer.edit.setFocus()
    harness.qtbot.waitUntil(tab.composer.edit.hasFocus, timeout=TIMEOUT)
    click_once(harness, tab, "r0", "continue")
    harness.qtbot.waitUntil(lambda: len(harness.server.requests) == 1, timeout=TIMEOUT)
    wait_idle(harness, tab)
