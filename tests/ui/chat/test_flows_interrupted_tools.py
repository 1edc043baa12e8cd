"""A tool that a crash stopped: the tab says so and offers Run again or Skip, nothing runs by itself."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from tests.support.interrupted_tools import FOLDER_FILE, seed_interrupted_round
from tests.support.sse_server import openai_text_stream, sse_response
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.messages import INTERRUPTED_RESULT_TEXT, MessageStatus
from threadline.engine.events import ErrorAction


def open_interrupted(harness: Any, tmp_path: Any, tool: str = "list_directory") -> Any:
    harness.open()
    session_id = harness.run(seed_interrupted_round(harness.engine, tmp_path, tool))
    tab = harness.run(harness.window.session_tabs.open(session_id, focus=True))
    harness.qtbot.waitUntil(lambda: tab.banner.button(ErrorAction.RERUN_TOOLS) is not None, timeout=WAIT_MS)
    assert "stopped while" in tab.banner.label.text()
    assert harness.server.stream_requests() == []  # nothing ran or was sent by itself
    return tab


def test_run_again_runs_the_interrupted_tool_and_the_reply_follows(harness: Any, tmp_path: Any) -> None:
    tab = open_interrupted(harness, tmp_path)
    harness.server.enqueue(sse_response(openai_text_stream(["There is one file."])))
    harness.qtbot.mouseClick(tab.banner.button(ErrorAction.RERUN_TOOLS), Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(
        lambda: tab.live.conversation.path()[-1].text == "There is one file.", timeout=WAIT_MS
    )
    wait_idle(harness, tab)
    assert not tab.banner.isVisible()
    answer = tab.live.conversation.path()[-2]
    assert [r.call_id for r in answer.tool_results] == ["call_1"]
    assert FOLDER_FILE in answer.tool_results[0].text and not answer.tool_results[0].is_error
    sent = harness.server.stream_requests()[0].body["messages"]
    assert any(FOLDER_FILE in str(m.get("content")) for m in sent if m.get("role") == "tool")


def test_skip_tells_the_model_the_call_was_interrupted(harness: Any, tmp_path: Any) -> None:
    tab = open_interrupted(harness, tmp_path)
    harness.qtbot.mouseClick(tab.banner.button(ErrorAction.SKIP_TOOLS), Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: bool(tab.live.conversation.path()[-1].tool_results), timeout=WAIT_MS)
    assert not tab.banner.isVisible()
    answer = tab.live.conversation.path()[-1]
    assert answer.status is MessageStatus.INTERRUPTED
    assert [r.text for r in answer.tool_results] == [INTERRUPTED_RESULT_TEXT]

    harness.server.enqueue(sse_response(openai_text_stream(["Understood, it did not finish."])))
    type_and_send(harness.qtbot, tab, "Go on without it")
    wait_idle(harness, tab)
    sent = harness.server.stream_requests()[0].body["messages"]
    tool_answers = [str(m.get("content")) for m in sent if m.get("role") == "tool"]
    assert tool_answers and all(INTERRUPTED_RESULT_TEXT in a for a in tool_answers)
    assert not any("cancelled by the user" in a.lower() for a in tool_answers)


def test_a_tool_threadline_cannot_vouch_for_is_named_with_check_before_running(
    harness: Any, tmp_path: Any
) -> None:
    """A built-in tool stopped with Threadline; one it does not know (say a remote server's) may
    have gone on, so the banner does not claim it did not finish."""
    tab = open_interrupted(harness, tmp_path)
    assert "did not finish" in tab.banner.label.text() and "cannot tell" not in tab.banner.label.text()
    tab.close()
    tab = open_interrupted(harness, tmp_path, tool="remote__deploy")
    text = tab.banner.label.text()
    assert (
        "cannot tell whether remote__deploy stopped too" in text and "Check before you run it again" in text
    )
    assert "did not finish" not in text
