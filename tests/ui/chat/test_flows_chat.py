"""Click-through flows with the real Engine streaming from the replay server."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import openai_auth_error, openai_text_stream, split_text, sse_response
from tests.support.ui_driving import click_action, texts, type_and_send, wait_idle
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.waiting import WAIT_MS

from threadline.core.messages import MessageStatus
from threadline.core.turn import TurnState
from threadline.engine.events import ErrorAction


def reply(text: str, **faults: Any) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4)), **faults)


def test_create_send_stream_and_title(harness: Any) -> None:
    harness.server.enqueue(reply("Hello! **Bold** and a list:\n\n- one\n- two\n", chunk_delay=0.005))
    window = harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Say hello in a list")
    assert tab.composer.text() == ""  # accepted: cleared
    harness.qtbot.waitUntil(lambda: tab.busy, timeout=WAIT_MS)
    assert tab.composer.send_button.text() == "Stop"
    wait_idle(harness, tab)
    assert texts(tab) == ["Say hello in a list", "Hello! **Bold** and a list:\n\n- one\n- two\n"]
    assert tab.model.rowCount() == 2
    assert tab.composer.send_button.text() == "Send"
    harness.qtbot.waitUntil(
        lambda: window.tabs.tabText(window.tabs.currentIndex()) == "Say hello in a list", timeout=WAIT_MS
    )
    # the sidebar shows the session with its automatic title
    info = window.sidebar.model.session(tab.session_id)
    assert info is not None and info.display_title == "Say hello in a list"
    assert "Threadline" in window.windowTitle()


def test_stop_with_escape_then_continue(harness: Any) -> None:
    text = " ".join(f"word{i}" for i in range(400))
    harness.server.enqueue(reply(text, chunk_delay=0.01))
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Write a lot")
    harness.qtbot.waitUntil(lambda: tab.model.rowCount() == 2 and len(texts(tab)[1]) > 20, timeout=WAIT_MS)
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Escape)
    wait_idle(harness, tab)
    partial = tab.live.conversation.path()[-1]
    assert partial.status is MessageStatus.CANCELLED
    assert 20 < len(partial.text) < len(text)
    # Continue the cancelled reply from its button
    harness.server.enqueue(reply(" and the rest."))
    click_action(harness.qtbot, tab, partial.id, "continue")
    wait_idle(harness, tab)
    final = tab.live.conversation.path()[-1]
    assert final.id == partial.id
    assert final.text.endswith("and the rest.")
    assert final.status is MessageStatus.COMPLETE


def test_edit_and_resend_then_switch_versions(harness: Any) -> None:
    harness.server.enqueue(reply("First answer."), reply("Second answer."))
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Question one")
    wait_idle(harness, tab)
    prompt = tab.live.conversation.path()[0]
    click_action(harness.qtbot, tab, prompt.id, "edit")
    assert tab.composer.editing == prompt.id
    assert tab.composer.text() == "Question one"
    tab.composer.edit.selectAll()
    harness.qtbot.keyClicks(tab.composer.edit, "Question two")
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)
    wait_idle(harness, tab)
    assert texts(tab) == ["Question two", "Second answer."]
    edited = tab.live.conversation.path()[0]
    assert tab.view.version_text(edited.id) == "2 / 2"
    click_action(harness.qtbot, tab, edited.id, "prev_version")
    harness.qtbot.waitUntil(lambda: texts(tab) == ["Question one", "First answer."], timeout=WAIT_MS)
    first = tab.live.conversation.path()[0]
    # the engine moves the leaf, stores it, then tells the tab: wait for the view
    harness.qtbot.waitUntil(lambda: tab.view.version_text(first.id) == "1 / 2", timeout=WAIT_MS)
    assert tab.view.visible_message_ids() == [m.id for m in tab.live.conversation.path()]


def test_regenerate_and_switch_versions(harness: Any) -> None:
    harness.server.enqueue(reply("Answer A."), reply("Answer B."))
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Pick a letter")
    wait_idle(harness, tab)
    answer = tab.live.conversation.path()[-1]
    click_action(harness.qtbot, tab, answer.id, "regenerate")
    harness.qtbot.waitUntil(lambda: texts(tab)[-1:] == ["Answer B."], timeout=WAIT_MS)
    wait_idle(harness, tab)
    regenerated = tab.live.conversation.path()[-1]
    assert tab.view.version_text(regenerated.id) == "2 / 2"
    click_action(harness.qtbot, tab, regenerated.id, "prev_version")
    harness.qtbot.waitUntil(lambda: texts(tab)[-1:] == ["Answer A."], timeout=WAIT_MS)
    first_answer = tab.live.conversation.path()[-1]
    harness.qtbot.waitUntil(lambda: tab.view.version_text(first_answer.id) == "1 / 2", timeout=WAIT_MS)
    assert tab.model.rowCount() == 2


def test_error_inline_with_retry_and_prompt_kept(harness: Any) -> None:
    harness.server.enqueue(openai_auth_error())
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Will this fail?")
    harness.qtbot.waitUntil(lambda: tab.banner.isVisible() and tab.banner.error is not None, timeout=WAIT_MS)
    assert tab.live.conversation.state is TurnState.FAILED
    assert texts(tab)[0] == "Will this fail?"  # the prompt is kept in history
    assert "Traceback" not in tab.banner.label.text()
    retry = tab.banner.button(ErrorAction.RETRY)
    add_key = tab.banner.button(ErrorAction.ADD_KEY)
    assert retry is not None or add_key is not None
    harness.server.enqueue(reply("It worked this time."))
    if retry is None:
        tab.retry()
    else:
        harness.qtbot.mouseClick(retry, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: texts(tab)[-1:] == ["It worked this time."], timeout=WAIT_MS)
    wait_idle(harness, tab)
    assert not tab.banner.isVisible()
    assert texts(tab)[0] == "Will this fail?"


def test_failed_reply_has_a_quiet_status_and_a_retry_button(harness: Any) -> None:
    harness.server.enqueue(openai_auth_error())
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Will this fail?")
    harness.qtbot.waitUntil(lambda: tab.banner.isVisible() and tab.banner.error is not None, timeout=WAIT_MS)
    wait_idle(harness, tab)
    failed = tab.live.conversation.path()[-1]
    assert failed.status is MessageStatus.FAILED
    assert failed.id in tab.view.visible_message_ids()
    assert tab.view._status(failed)[0] == "Failed"  # a short label like "Stopped", not the whole error
    assert failed.metadata is not None and failed.metadata.error
    assert failed.metadata.error in tab.view._docs[failed.id].doc.toPlainText()  # the reason, in the body
    assert tab.view.action_rect(failed.id, "regenerate") is None
    harness.server.enqueue(reply("It worked this time."))
    click_action(harness.qtbot, tab, failed.id, "retry")
    harness.qtbot.waitUntil(lambda: texts(tab)[-1:] == ["It worked this time."], timeout=WAIT_MS)
    wait_idle(harness, tab)
    assert tab.live.conversation.path()[-1].status is MessageStatus.COMPLETE
    assert not tab.banner.isVisible()
