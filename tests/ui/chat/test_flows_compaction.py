"""The context-overflow banner's "Compact conversation" button, clicked as a person would.

Real Engine, real SQLite, the replay server playing the provider: a chat grows until
the provider answers "context length exceeded" even after the engine's own automatic
compaction, the banner offers Compact, and clicking it must visibly summarise the
conversation and let the user go on.
"""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import (
    RecordedRequest,
    ScriptedResponse,
    openai_context_length_error,
    openai_text_stream,
    split_text,
    sse_response,
)
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.messages import MessageKind, MessageStatus
from threadline.engine.events import ErrorAction
from threadline.ui.chat.view.conversation_model import MessageRole

SUMMARY_TEXT = "Q1 to Q4 asked about plants; A1 to A3 answered."


def reply(text: str) -> ScriptedResponse:
    return sse_response(openai_text_stream(split_text(text, 4)))


def overflowing_chat(harness: Any) -> Any:
    """Three answered turns, then a fourth the provider refuses even after automatic compaction."""
    harness.server.enqueue(reply("A1"), reply("A2"), reply("A3"))
    harness.open()
    tab = new_tab(harness)
    for prompt in ("Q1", "Q2", "Q3"):
        type_and_send(harness.qtbot, tab, prompt)
        wait_idle(harness, tab)
    harness.server.enqueue(
        openai_context_length_error(), reply("Automatic summary of Q1 to A3."), openai_context_length_error()
    )
    type_and_send(harness.qtbot, tab, "Q4")
    harness.qtbot.waitUntil(lambda: tab.banner.error is not None, timeout=WAIT_MS)
    wait_idle(harness, tab)
    assert tab.banner.isVisible() and tab.banner.error is not None
    assert tab.banner.error.kind == "context_overflow"
    return tab


def shown_rows(tab: Any) -> list[Any]:
    """The messages the chat view shows, read through its model as the view does."""
    model = tab.view.model()
    return [model.data(model.index(row, 0), MessageRole) for row in range(model.rowCount())]


def test_compact_button_summarises_with_progress_and_the_next_send_works(harness: Any) -> None:
    tab = overflowing_chat(harness)
    requests_before = len(harness.server.requests)
    release = threading.Event()

    def summary_when_released(request: RecordedRequest) -> ScriptedResponse:
        release.wait(30)
        return reply(SUMMARY_TEXT)

    harness.server.responder = summary_when_released
    button = tab.banner.button(ErrorAction.COMPACT)
    assert button is not None and button.text() == "Compact conversation"
    harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    # Progress while the summary is being written: the banner says so, sending waits.
    assert tab.banner.isVisible() and tab.banner.label.text() == "Summarising earlier messages…"
    assert tab.banner.error is None
    assert "Summarising earlier messages…" in tab.status
    harness.qtbot.waitUntil(lambda: len(harness.server.requests) == requests_before + 1, timeout=WAIT_MS)
    assert tab.composer.held_reason == "Summarising earlier messages…"
    release.set()

    # The summary shows in the conversation; the banner is gone.
    harness.qtbot.waitUntil(
        lambda: any(m.kind is MessageKind.SUMMARY and m.text == SUMMARY_TEXT for m in shown_rows(tab)),
        timeout=WAIT_MS,
    )
    harness.qtbot.waitUntil(lambda: not tab.banner.isVisible(), timeout=WAIT_MS)
    summary_prompt = harness.server.requests[-1].body["messages"][-1]["content"]
    assert "Q4" in summary_prompt  # everything, the turn that did not fit included
    assert "Summarising" not in tab.status

    # The next send goes out with the summary instead of the old messages, and is answered.
    harness.server.responder = None
    harness.server.enqueue(reply("A5"))
    type_and_send(harness.qtbot, tab, "Q5")
    wait_idle(harness, tab)
    sent = harness.server.requests[-1].body["messages"]
    assert SUMMARY_TEXT in sent[0]["content"]
    assert [m["content"] for m in sent[1:]] == ["Q5"]
    rows = shown_rows(tab)
    assert [m.text for m in rows[-2:]] == ["Q5", "A5"] and rows[-1].status is MessageStatus.COMPLETE
    assert not tab.banner.isVisible()


def test_a_failed_compaction_says_why_in_the_banner_and_sending_still_works(harness: Any) -> None:
    tab = overflowing_chat(harness)
    rows_before = [m.id for m in shown_rows(tab)]
    harness.server.enqueue(reply(""))  # the model answers the summary request with nothing
    button = tab.banner.button(ErrorAction.COMPACT)
    assert button is not None
    harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(
        lambda: tab.banner.error is not None and "empty summary" in tab.banner.label.text(), timeout=WAIT_MS
    )
    assert tab.banner.isVisible()
    assert [m.id for m in shown_rows(tab)] == rows_before  # nothing was summarised
    harness.qtbot.waitUntil(lambda: "Summarising" not in tab.status, timeout=WAIT_MS)
    assert "empty summary" in tab.banner.label.text()  # the error stays up

    harness.server.enqueue(reply("A5"))
    type_and_send(harness.qtbot, tab, "Q5")
    wait_idle(harness, tab)
    assert shown_rows(tab)[-1].text == "A5"
    assert not tab.banner.isVisible()


EMPTY_200 = ScriptedResponse(status=200, headers={"Content-Type": "text/event-stream"}, chunks=[])
"""llama-cpp-python's answer to a streamed request over its window: HTTP 200, nothing in it."""


def test_an_empty_reply_with_an_unknown_window_offers_compact_the_window_and_retry(harness: Any) -> None:
    """Nothing older than the prompt to compact and the server's window unknown: the banner names
    the likely cause, and its "Set the context window…" opens Settings on the Models page."""
    harness.open()
    tab = new_tab(harness)
    harness.run(harness.engine.sessions.set_session_model(tab.session_id, "replay", "tiny-local-model"))
    harness.qtbot.waitUntil(lambda: tab.live.info.model == "tiny-local-model", timeout=WAIT_MS)
    harness.server.enqueue(EMPTY_200)
    type_and_send(harness.qtbot, tab, "Q1 " + "word " * 96)
    harness.qtbot.waitUntil(lambda: tab.banner.error is not None, timeout=WAIT_MS)
    wait_idle(harness, tab)
    error = tab.banner.error
    assert error is not None and error.kind == "context_overflow"
    assert "smaller than this request" in error.message
    # Said once: the failed reply in the chat gives the whole explanation, the banner its first
    # sentence (naming the message that does not fit) and the buttons.
    failed = tab.live.conversation.path()[-1]
    assert failed.metadata is not None and failed.metadata.error == error.message
    said = tab.banner.label.text()
    assert said.startswith("Your message “Q1 word word") and said.endswith("The reply above says more.")
    assert "smaller than this request" not in said and len(said) < len(error.message) / 2
    assert error.actions == (ErrorAction.COMPACT, ErrorAction.SET_CONTEXT_WINDOW, ErrorAction.RETRY)
    for action, text in (
        (ErrorAction.COMPACT, "Compact conversation"),
        (ErrorAction.SET_CONTEXT_WINDOW, "Set the context window…"),
        (ErrorAction.RETRY, "Retry"),
    ):
        button = tab.banner.button(action)
        assert button is not None and button.isVisible() and button.text() == text

    button = tab.banner.button(ErrorAction.SET_CONTEXT_WINDOW)
    harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    window = harness.window
    harness.qtbot.waitUntil(lambda: getattr(window, "_settings_dialog", None) is not None, timeout=WAIT_MS)
    dialog = window._settings_dialog
    harness.qtbot.waitUntil(dialog.isVisible, timeout=WAIT_MS)
    assert dialog.pages.currentWidget() is dialog.models
    dialog.reject()
    harness.qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)

    # "Compact conversation" summarises everything, the prompt that did not fit included;
    # the next message goes out with the summary instead.
    harness.server.enqueue(reply("Summary: a long prompt of repeated words."))
    compact = tab.banner.button(ErrorAction.COMPACT)
    assert compact is not None
    harness.qtbot.mouseClick(compact, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(
        lambda: any(m.kind is MessageKind.SUMMARY for m in shown_rows(tab)), timeout=WAIT_MS
    )
    harness.qtbot.waitUntil(lambda: not tab.banner.isVisible(), timeout=WAIT_MS)
    harness.server.enqueue(reply("A2"))
    type_and_send(harness.qtbot, tab, "Q2")
    wait_idle(harness, tab)
    sent = harness.server.requests[-1].body["messages"]
    assert "a long prompt of repeated words" in sent[0]["content"]
    assert [m["content"] for m in sent[1:]] == ["Q2"]
