"""Stop pressed while a tool runs, as a person does it: a click on Stop.

The keyboard goes back to the message box (the Stop button turning into a disabled Send used
to hand it to the next widget, the conversation menu, where Enter opened the menu), and the
tool's box says at once that it was stopped and after how long, instead of nothing until the
next message and then "Not run" (issue 28)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import new_tab_by_click, type_and_send, wait_idle

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import MessageKind

TIMEOUT = 30000
RUN_SECONDS = 2.0


def start_a_long_command(harness: Any, tmp_path: Path) -> Any:
    """A chat whose reply runs ``sleep 60`` through the shell tool, allowed without asking, once
    the command has started."""
    harness.server.enqueue(
        sse_response(
            openai_tool_call_stream(
                [("c1", "shell", {"command": "echo started > started.txt; sleep 60"})],
                text_pieces=["Waiting."],
            )
        ),
        sse_response(openai_text_stream(["Done."])),
    )
    harness.open()
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("shell",),
                allowed_folders=(str(tmp_path),),
                approval_rules=(ApprovalRule("shell", Approval.ALLOW),),
            )
        )
    )
    tab = new_tab_by_click(harness)
    type_and_send(harness.qtbot, tab, "Wait a minute")
    harness.qtbot.waitUntil(lambda: "Running tools" in tab.status, timeout=TIMEOUT)
    harness.qtbot.waitUntil(lambda: (tmp_path / "started.txt").exists(), timeout=TIMEOUT)  # it runs
    return tab


def click_stop(harness: Any, tab: Any) -> None:
    button = tab.composer.send_button
    assert button.text() == "Stop"
    harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_after_stop_the_keyboard_is_in_the_message_box_and_enter_sends(harness: Any, tmp_path: Path) -> None:
    tab = start_a_long_command(harness, tmp_path)
    click_stop(harness, tab)
    wait_idle(harness, tab)
    harness.qtbot.waitUntil(lambda: tab.window().focusWidget() is tab.composer.edit, timeout=TIMEOUT)
    focused = tab.window().focusWidget()
    harness.qtbot.keyClicks(focused, "Next question")
    harness.qtbot.keyClick(focused, Qt.Key.Key_Return)
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].text == "Done.", timeout=TIMEOUT)
    prompts = [m.text for m in tab.live.conversation.path() if m.kind is MessageKind.PROMPT]
    assert prompts == ["Wait a minute", "Next question"]


def test_a_stopped_tool_says_at_once_after_how_long_it_was_stopped(harness: Any, tmp_path: Path) -> None:
    tab = start_a_long_command(harness, tmp_path)
    started = time.monotonic()
    harness.qtbot.waitUntil(lambda: time.monotonic() - started >= RUN_SECONDS, timeout=TIMEOUT)
    click_stop(harness, tab)
    wait_idle(harness, tab)
    ran = time.monotonic() - started
    last = tab.live.conversation.path()[-1]
    assert last.tool_results, "the stopped call is answered at once"
    harness.qtbot.waitUntil(lambda: tab.view.rendered_document(last.id) is not None, timeout=TIMEOUT)
    shown = tab.view.rendered_document(last.id).toPlainText()
    match = re.search(r"Stopped after (\d+) s", shown)
    assert match is not None, shown
    assert RUN_SECONDS - 1 <= int(match.group(1)) <= ran + 1
    assert "Not run" not in shown
