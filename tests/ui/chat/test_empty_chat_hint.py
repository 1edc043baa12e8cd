"""A new chat is not a blank area: the middle of the view says where the conversation will be
and which model answers; the first message takes its place."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS


def inked(tab: Any) -> int:
    """Pixels of the view's upper half that are not its background (the hint's text)."""
    view = tab.view
    image = view.viewport().grab().toImage()
    base = QColor(view._colors.base).rgb()
    width, height = image.width(), image.height() // 2
    return sum(1 for y in range(0, height, 2) for x in range(0, width, 2) if image.pixel(x, y) != base)


def test_a_new_chat_says_where_to_write_and_who_answers_until_its_first_message(harness: Any) -> None:
    harness.open()
    tab = new_tab(harness)
    harness.qtbot.waitUntil(lambda: tab.view.empty_hint[0] != "", timeout=WAIT_MS)
    title, lines = tab.view.empty_hint
    assert title == "Start the conversation below"
    assert lines == ("Replies come from gpt-4o-mini · replay.",)
    harness.qtbot.waitUntil(lambda: inked(tab) > 50, timeout=WAIT_MS)  # drawn, not only set

    harness.server.enqueue(sse_response(openai_text_stream(["Hello there."])))
    type_and_send(harness.qtbot, tab, "Hi")
    wait_idle(harness, tab)
    assert tab.model.rowCount() == 2
    texts_drawn = inked(tab)
    tab.view.set_empty_hint("", ())  # the same view with no hint: what the messages alone draw
    tab.view.viewport().repaint()
    assert inked(tab) == texts_drawn  # the hint is not drawn over a chat that has messages
