"""Helpers to drive the window as a user does: type, press keys, click painted buttons."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from tests.support.waiting import WAIT_MS


def type_and_send(qtbot: Any, tab: Any, text: str) -> None:
    edit = tab.composer.edit
    edit.setFocus()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def click_action(qtbot: Any, tab: Any, message_id: str, action: str) -> None:
    """Click one of the painted per-message buttons (Copy, Edit, Regenerate, ‹, ›…)."""
    view = tab.view
    qtbot.waitUntil(lambda: view.action_rect(message_id, action) is not None, timeout=WAIT_MS)
    rect = view.action_rect(message_id, action)
    QTest.mouseMove(view.viewport(), rect.center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def texts(tab: Any) -> list[str]:
    return [m.text for m in tab.live.conversation.path()]


def point(x: int, y: int) -> QPoint:
    return QPoint(x, y)


def new_tab_by_click(harness: Any) -> Any:
    """Click the sidebar's New button and return the new tab once it is current."""
    window = harness.window
    before = set(window.tabs.tabs())
    harness.qtbot.mouseClick(window.sidebar.new_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: window.tabs.current_tab() not in (None, *before), timeout=WAIT_MS)
    return window.tabs.current_tab()


def new_tab_by_shortcut(harness: Any) -> Any:
    """Press Ctrl+N and return the new tab."""
    window = harness.window
    before = window.tabs.count()
    harness.qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    harness.qtbot.waitUntil(lambda: window.tabs.count() == before + 1, timeout=WAIT_MS)
    return window.tabs.current_tab()


def wait_idle(harness: Any, tab: Any, timeout: int = WAIT_MS) -> None:
    """Wait until the tab's turn is over: the conversation, the tab and the engine agree."""
    harness.qtbot.waitUntil(
        lambda: (
            tab.live.conversation.ready_for_input
            and not tab.busy
            and not harness.engine.turns.running(tab.session_id)
        ),
        timeout=timeout,
    )


def open_with_stored_chats(harness: Any, prompts: dict[str, tuple[str, str]], timeout: int = WAIT_MS) -> None:
    """Store chats before the window opens (id → (title, first prompt)), open it, wait for their rows.

    The prompt of the n-th chat gets the id ``m<n>``.
    """
    from tests.support.chat_trees import Chat, store_chat

    from threadline.core.messages import Message
    from threadline.core.session import SessionInfo
    from threadline.store.repository import Store

    async def fill() -> None:
        harness.data_dir.mkdir(parents=True, exist_ok=True)
        store = await Store.open(Store.sqlite_url(harness.data_dir / "threadline.db"))
        try:
            for n, (sid, (title, prompt)) in enumerate(prompts.items()):
                await store_chat(
                    store, Chat(SessionInfo(id=sid, title=title), [Message.prompt(prompt, id=f"m{n}")])
                )
        finally:
            await store.close()

    harness.run(fill())
    harness.open()
    sidebar = harness.window.sidebar
    harness.qtbot.waitUntil(
        lambda: all(sidebar.model.index_of(s).isValid() for s in prompts), timeout=timeout
    )
