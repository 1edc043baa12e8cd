"""The sidebar's preview line is the shown path's last message as the chat displays it: it
follows a version switch (also after a restart), and Markdown's lone markers stay text. A search
hit's row shows the matched word, wherever it is in the message."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import click_action, texts, type_and_send, wait_idle
from tests.support.ui_driving import new_tab_by_click as new_tab

from threadline.ui.sessions.search_results_model import ResultRole

TIMEOUT = 15000


def reply(text: str) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4)))


def shown_preview(harness: Any, session_id: str) -> str:
    """What the chat's row shows under its title (also what a screen reader reads)."""
    index = harness.window.sidebar.model.index_of(session_id)
    return str(index.data(Qt.ItemDataRole.AccessibleDescriptionRole)) if index.isValid() else ""


def test_the_preview_follows_the_version_shown_and_keeps_it_after_a_restart(harness: Any) -> None:
    harness.server.enqueue(reply("Answer **A**."), reply("Answer B."))
    harness.open()
    tab = new_tab(harness)
    session_id = tab.session_id
    type_and_send(harness.qtbot, tab, "Pick a letter")
    wait_idle(harness, tab)
    answer = tab.live.conversation.path()[-1]
    click_action(harness.qtbot, tab, answer.id, "regenerate")
    harness.qtbot.waitUntil(lambda: texts(tab)[-1:] == ["Answer B."], timeout=TIMEOUT)
    wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: shown_preview(harness, session_id) == "Answer B.", timeout=TIMEOUT)

    click_action(harness.qtbot, tab, tab.live.conversation.path()[-1].id, "prev_version")
    harness.qtbot.waitUntil(lambda: texts(tab)[-1:] == ["Answer **A**."], timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: shown_preview(harness, session_id) == "Answer A.", timeout=TIMEOUT)

    harness.close()
    harness.open()
    harness.qtbot.waitUntil(lambda: shown_preview(harness, session_id) == "Answer A.", timeout=TIMEOUT)


def test_a_power_previews_as_written(harness: Any) -> None:
    harness.server.enqueue(reply("2**10 = 1024, and `x**2` is code."))
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "What is 2 to the 10th?")
    wait_idle(harness, tab)
    harness.qtbot.waitUntil(
        lambda: shown_preview(harness, tab.session_id) == "2**10 = 1024, and x**2 is code.", timeout=TIMEOUT
    )


def test_a_search_hit_at_the_end_of_a_long_message_shows_in_its_row(harness: Any) -> None:
    words = " ".join(f"word{i}" for i in range(60))
    harness.server.enqueue(reply(f"{words} and finally the zeppelin arrived."))
    harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Tell me a long story")
    wait_idle(harness, tab)
    sidebar = harness.window.sidebar
    sidebar.filter.setFocus()
    harness.qtbot.keyClicks(sidebar.filter, "zeppelin")
    harness.qtbot.waitUntil(lambda: sidebar.results.rowCount() == 1, timeout=TIMEOUT)
    view = sidebar.hits
    harness.qtbot.waitUntil(view.isVisible, timeout=TIMEOUT)
    index = sidebar.results.index(0, 0)
    delegate = view.itemDelegateForIndex(index)
    width = view.visualRect(index).adjusted(16, 0, -16, 0).width()  # the row's text area
    pieces = delegate.shown_pieces(index.data(ResultRole), view.font(), width)
    hit_at = next(i for i, (_, hit) in enumerate(pieces) if hit)
    assert pieces[hit_at][0].lower() == "zeppelin"
    assert pieces[0][0].startswith("…")  # the words far before it gave way

    small = QFont(view.font())
    small.setPointSizeF(small.pointSizeF() * 0.9)
    bold = QFont(small)
    bold.setWeight(QFont.Weight.Bold)
    before = sum(QFontMetrics(small).horizontalAdvance(text) for text, _ in pieces[:hit_at])
    assert before + QFontMetrics(bold).horizontalAdvance(pieces[hit_at][0]) <= width
