"""A tool approval asked by a Quick ask turn shows in the Quick ask window, not the main one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import texts, wait_idle
from tests.support.waiting import WAIT_MS
from tests.ui.quick_ask.test_quick_ask_window import open_quick_ask

from threadline.core.config import AgentConfig

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the shell tool runs POSIX commands here")


def test_approval_of_a_quick_ask_turn_asks_in_the_quick_ask_window(harness: Any, tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    harness.server.enqueue(
        sse_response(
            openai_tool_call_stream(
                [("c1", "shell", {"command": "echo hello from quick ask"})], text_pieces=["Let me check."]
            )
        ),
        sse_response(openai_text_stream(["The shell said hello."])),
    )
    window = harness.open()
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig("default", "Default", enabled_tools=("shell",), allowed_folders=(str(folder),))
        )
    )
    qa = open_quick_ask(harness)
    card, tab = qa.window, qa.tab
    harness.qtbot.waitUntil(lambda: tab.composer.edit.hasFocus(), timeout=WAIT_MS)
    harness.qtbot.keyClicks(tab.composer.edit, "Say hello with the shell")
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)

    harness.qtbot.waitUntil(lambda: tab.awaiting_approval and tab.approval.isVisible(), timeout=WAIT_MS)
    (row,) = tab.approval.rows
    assert row.window() is card  # asked in the Quick ask window ...
    assert window.tabs.tab_for(tab.session_id) is None  # ... not in a tab of the main window
    assert window.tabs.count() == 0
    assert card.isVisible() and not window.isActiveWindow()
    harness.qtbot.waitUntil(lambda: QApplication.focusWidget() is row.allow_button, timeout=WAIT_MS)

    harness.qtbot.mouseClick(row.allow_button, Qt.MouseButton.LeftButton)
    wait_idle(harness, tab)
    assert texts(tab)[-1] == "The shell said hello."
    results = tab.live.conversation.path()[2]
    assert "hello from quick ask" in results.tool_results[0].text
    assert window.tabs.count() == 0 and card.isVisible()


def test_an_approval_after_esc_brings_quick_ask_back_with_the_question(harness: Any, tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    harness.server.enqueue(
        sse_response(
            openai_tool_call_stream([("c1", "shell", {"command": "echo later"})], text_pieces=["Checking."]),
            first_byte_delay=0.5,
        ),
        sse_response(openai_text_stream(["Done later."])),
    )
    window = harness.open()
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig("default", "Default", enabled_tools=("shell",), allowed_folders=(str(folder),))
        )
    )
    qa = open_quick_ask(harness)
    card, tab = qa.window, qa.tab
    hidden: list[bool] = []
    card.hidden.connect(lambda: hidden.append(True))
    harness.qtbot.waitUntil(lambda: tab.composer.edit.hasFocus(), timeout=WAIT_MS)
    harness.qtbot.keyClicks(tab.composer.edit, "Run it")
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Return)
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Escape)  # hidden while the model thinks
    assert hidden and not card.isVisible()

    harness.qtbot.waitUntil(lambda: tab.awaiting_approval and card.isVisible(), timeout=WAIT_MS)
    (row,) = tab.approval.rows
    assert row.window() is card and row.isVisible()
    assert window.tabs.count() == 0
    harness.qtbot.mouseClick(row.allow_button, Qt.MouseButton.LeftButton)
    wait_idle(harness, tab)
    assert texts(tab)[-1] == "Done later."
