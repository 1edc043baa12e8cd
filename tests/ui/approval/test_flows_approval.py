"""Tool approval clicked through in a tab, with the real Engine and the replay server.

The model (replayed OpenAI SSE) asks for built-in tools; the tab's approval bar
shows each call and the user answers with the mouse or the keyboard. Outcomes are
checked where they matter: what ran, what is stored, and what the model is sent next.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import CANCELLED_RESULT_TEXT, STOPPED_RESULT_TEXT, MessageKind, MessageStatus
from threadline.core.turn import TurnState

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the shell tool runs POSIX commands here")


def tool_reply(*calls: tuple[str, str, dict[str, Any]]) -> Any:
    return sse_response(openai_tool_call_stream(list(calls), text_pieces=["Let me check."]))


def text_reply(text: str) -> Any:
    return sse_response(openai_text_stream([text]))


def sent_results(harness: Any, index: int) -> dict[str, str]:
    """Tool results (by call id) carried by request ``index`` to the model."""
    body = harness.server.stream_requests()[index].body
    return {m["tool_call_id"]: str(m["content"]) for m in body["messages"] if m.get("role") == "tool"}


def use_tools(harness: Any, folder: Path, *tools: str, rules: tuple[ApprovalRule, ...] = ()) -> None:
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=tools,
                allowed_folders=(str(folder),),
                approval_rules=rules,
            )
        )
    )


def wait_asked(harness: Any, tab: Any, count: int = 1) -> list[Any]:
    harness.qtbot.waitUntil(
        lambda: tab.approval.isVisibleTo(tab) and len(tab.approval.rows) == count, timeout=WAIT_MS
    )
    assert tab.awaiting_approval
    return list(tab.approval.rows)


def click(harness: Any, button: Any) -> None:
    assert button.isVisible() and button.isEnabled()
    harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def path_kinds(tab: Any) -> list[MessageKind]:
    return [m.kind for m in tab.live.conversation.path()]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def test_allow_once_runs_the_tool_and_sends_its_result(harness: Any, work: Path) -> None:
    harness.server.enqueue(
        tool_reply(("c1", "shell", {"command": "echo hello from shell"})), text_reply("The shell said hello.")
    )
    harness.open()
    use_tools(harness, work, "shell")
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Say hello with the shell")
    (row,) = wait_asked(harness, tab)
    assert row.name_label.text() == "shell"
    assert [b.text for b in row.boxes] == ["echo hello from shell"]  # the command line, monospace
    assert tab.live.conversation.state is TurnState.AWAITING_APPROVAL
    assert "Waiting for your approval" in tab.status
    assert harness.window.status_label.text() == tab.status
    click(harness, row.allow_button)
    wait_idle(harness, tab)
    assert not tab.approval.isVisible() and not tab.awaiting_approval
    assert path_kinds(tab) == [
        MessageKind.PROMPT,
        MessageKind.TOOL_CALLS,
        MessageKind.TOOL_RESULTS,
        MessageKind.RESPONSE,
    ]
    results = tab.live.conversation.path()[2]
    assert "hello from shell" in results.tool_results[0].text
    assert results.id in tab.view.visible_message_ids()  # shown in the chat
    assert "hello from shell" in sent_results(harness, 1)["c1"]  # and sent back to the model
    # "Allow once" stored no rule
    assert harness.run(harness.engine.agents.get_agent()).approval_rules == ()


def test_always_allow_is_stored_and_survives_a_restart(harness: Any, work: Path) -> None:
    command = "echo trusted"
    harness.server.enqueue(tool_reply(("c1", "shell", {"command": command})), text_reply("Done once."))
    harness.open()
    use_tools(harness, work, "shell")
    tab = new_tab(harness)
    session_id = tab.session_id
    type_and_send(harness.qtbot, tab, "Run the trusted command")
    (row,) = wait_asked(harness, tab)
    click(harness, row.always_button)
    wait_idle(harness, tab)
    assert "trusted" in sent_results(harness, 1)["c1"]
    rules = harness.run(harness.engine.agents.get_agent()).approval_rules
    assert rules == (ApprovalRule("shell", Approval.ALLOW, argument_pattern=command),)

    harness.close()
    harness.server.enqueue(tool_reply(("c2", "shell", {"command": command})), text_reply("Done twice."))
    window = harness.open()
    harness.qtbot.waitUntil(lambda: window.tabs.tab_for(session_id) is not None, timeout=WAIT_MS)
    tab = window.tabs.tab_for(session_id)
    asked: list[bool] = []
    tab.approvalChanged.connect(asked.append)
    type_and_send(harness.qtbot, tab, "Again please")
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].text == "Done twice.", timeout=WAIT_MS)
    wait_idle(harness, tab)
    assert asked == [] and not tab.approval.isVisible()  # ran without asking
    assert "trusted" in sent_results(harness, 3)["c2"]


def test_deny_with_a_reason_reaches_the_model(harness: Any, work: Path) -> None:
    harness.server.enqueue(
        tool_reply(("c1", "shell", {"command": "rm -rf build"})),
        text_reply("Understood, I will not delete it."),
    )
    harness.open()
    use_tools(harness, work, "shell")
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Clean up")
    (row,) = wait_asked(harness, tab)
    row.reason.setFocus()
    harness.qtbot.keyClicks(row.reason, "keep the build folder")
    harness.qtbot.keyClick(row.reason, Qt.Key.Key_Return)  # Enter in the reason field denies
    wait_idle(harness, tab)
    assert not (work / "build").exists()
    refused = tab.live.conversation.path()[2]
    assert refused.kind is MessageKind.CANCELLED_TOOL_USES
    sent = sent_results(harness, 1)["c1"]
    assert CANCELLED_RESULT_TEXT in sent and "keep the build folder" in sent
    assert tab.live.conversation.path()[-1].text == "Understood, I will not delete it."
    assert tab.composer.edit.hasFocus() or not tab.approval.isAncestorOf(tab.focusWidget())


def test_write_file_shows_the_diff_before_approval(harness: Any, work: Path) -> None:
    (work / "notes.txt").write_text("first line\nold second line\n")
    new = "first line\nnew second line\nthird line\n"
    harness.server.enqueue(
        tool_reply(("w1", "write_file", {"path": "notes.txt", "content": new})),
        text_reply("Updated the notes."),
    )
    harness.open()
    use_tools(harness, work, "write_file")
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Update my notes")
    (row,) = wait_asked(harness, tab)
    assert tab.approval.title.text() == "The assistant wants to change a file"
    assert row.what_label.text() == "Write notes.txt"
    (diff,) = row.boxes
    lines = diff.toPlainText().splitlines()
    assert "-old second line" in lines and "+new second line" in lines and "+third line" in lines
    assert lines[0] == "--- a/notes.txt"
    # each +/- line has its own background
    block = diff.document().findBlockByNumber(lines.index("+new second line"))
    assert block.blockFormat().background().style() != Qt.BrushStyle.NoBrush
    assert (work / "notes.txt").read_text() == "first line\nold second line\n"  # nothing written yet
    click(harness, row.allow_button)
    wait_idle(harness, tab)
    assert (work / "notes.txt").read_text() == new


def test_several_calls_decided_one_by_one_and_all_at_once(harness: Any, work: Path) -> None:
    harness.server.enqueue(
        tool_reply(
            ("a", "shell", {"command": "echo one"}),
            ("b", "shell", {"command": "echo two"}),
            ("c", "list_directory", {}),
        ),
        text_reply("First round done."),
        tool_reply(("d", "shell", {"command": "echo three"}), ("e", "shell", {"command": "echo four"})),
        text_reply("Second round done."),
    )
    harness.open()
    use_tools(harness, work, "shell", "list_directory")
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Do three things")
    rows = wait_asked(harness, tab, 3)
    assert tab.approval.title.text() == "The assistant wants to use 3 tools"
    assert [r.name_label.text() for r in rows] == ["shell", "shell", "list_directory"]
    click(harness, rows[1].deny_button)
    assert tab.awaiting_approval  # still waiting for the other two
    assert rows[1].outcome.text() == "Denied"
    click(harness, tab.approval.allow_all_button)
    wait_idle(harness, tab)
    sent = sent_results(harness, 1)
    assert "one" in sent["a"] and CANCELLED_RESULT_TEXT in sent["b"] and "(empty folder)" in sent["c"]

    type_and_send(harness.qtbot, tab, "Two more")
    wait_asked(harness, tab, 2)
    click(harness, tab.approval.deny_all_button)
    wait_idle(harness, tab)
    sent = sent_results(harness, 3)
    assert CANCELLED_RESULT_TEXT in sent["d"] and CANCELLED_RESULT_TEXT in sent["e"]


def test_keyboard_only(harness: Any, work: Path) -> None:
    """Focus lands on Allow once; Tab reaches Always allow; Space answers; Esc stops."""
    harness.server.enqueue(
        tool_reply(("k1", "shell", {"command": "echo keys"})),
        text_reply("ok"),
        tool_reply(("k2", "shell", {"command": "echo esc"})),
    )
    harness.open()
    use_tools(harness, work, "shell")
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Use the keyboard")
    (row,) = wait_asked(harness, tab)
    harness.window.activateWindow()
    row.allow_button.setFocus()
    harness.qtbot.keyClick(row.allow_button, Qt.Key.Key_Tab)
    assert row.always_button.hasFocus()
    harness.qtbot.keyClick(row.allow_button, Qt.Key.Key_Backtab)
    harness.qtbot.keyClick(row.allow_button, Qt.Key.Key_Space)
    wait_idle(harness, tab)
    assert "keys" in sent_results(harness, 1)["k1"]

    type_and_send(harness.qtbot, tab, "Then stop")
    (row,) = wait_asked(harness, tab)
    harness.qtbot.keyClick(row.deny_button, Qt.Key.Key_Escape)  # Esc in the bar stops the turn
    wait_idle(harness, tab)
    stopped = tab.live.conversation.path()[-1]
    assert stopped.kind is MessageKind.CANCELLED_TOOL_USES
    assert stopped.tool_results
    assert all(CANCELLED_RESULT_TEXT in r.text for r in stopped.tool_results)
    assert not tab.approval.isVisible() and not tab.awaiting_approval
    assert harness.server.pending == 0 and len(harness.server.stream_requests()) == 3  # nothing more was sent


def test_stop_while_a_tool_runs_stores_a_cancelled_result(harness: Any, work: Path) -> None:
    harness.server.enqueue(
        tool_reply(("s1", "shell", {"command": "echo started > started.txt; sleep 60; echo late"})),
        text_reply("Back to you."),
    )
    harness.open()
    use_tools(harness, work, "shell")
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Take your time")
    (row,) = wait_asked(harness, tab)
    click(harness, row.allow_button)
    harness.qtbot.waitUntil(lambda: (work / "started.txt").exists(), timeout=WAIT_MS)  # the command runs
    assert tab.composer.send_button.text() == "Stop"
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Escape)
    wait_idle(harness, tab, timeout=WAIT_MS)  # well before the command would have finished
    last = tab.live.conversation.path()[-1]
    assert last.kind is MessageKind.CANCELLED_TOOL_USES
    assert STOPPED_RESULT_TEXT in last.tool_results[0].text  # it ran, and was stopped
    # the tab is usable: the next prompt is answered, and the stopped result goes with it
    type_and_send(harness.qtbot, tab, "Never mind")
    harness.qtbot.waitUntil(lambda: tab.live.conversation.path()[-1].text == "Back to you.", timeout=WAIT_MS)
    assert STOPPED_RESULT_TEXT in sent_results(harness, 1)["s1"]


def test_closing_the_tab_while_asked_cancels_and_a_closed_session_reopens_to_ask(
    harness: Any, work: Path
) -> None:
    harness.server.enqueue(tool_reply(("x1", "shell", {"command": "echo closed"})))
    window = harness.open()
    use_tools(harness, work, "shell")
    tab = new_tab(harness)
    session_id = tab.session_id
    type_and_send(harness.qtbot, tab, "Ask me, then I close")
    wait_asked(harness, tab)
    window.close_current_tab()
    harness.qtbot.waitUntil(lambda: not harness.engine.turns.running(session_id), timeout=WAIT_MS)
    live = harness.engine.sessions.live(session_id)
    path = live.conversation.path()
    assert path[-1].kind is MessageKind.CANCELLED_TOOL_USES
    assert live.conversation.ready_for_input

    # A turn that asks while its session has no tab opens one (in the background) to ask there.
    harness.server.enqueue(tool_reply(("x2", "shell", {"command": "echo reopened"})), text_reply("ok"))
    other = new_tab(harness)
    harness.engine.turns.send(session_id, "Ask again")
    harness.qtbot.waitUntil(lambda: window.tabs.tab_for(session_id) is not None, timeout=WAIT_MS)
    reopened = window.tabs.tab_for(session_id)
    wait_asked(harness, reopened)
    assert window.tabs.current_tab() is other  # not pulled to the front
    assert not other.awaiting_approval and not other.approval.isVisibleTo(other)  # no leak into other tabs
    index = window.tabs.indexOf(reopened)
    assert not window.tabs.tabIcon(index).isNull()  # the tab is marked
    window.tabs.setCurrentWidget(reopened)
    assert window.tabs.tabIcon(index).isNull()  # in view: the bar says it
    click(harness, reopened.approval.rows[0].allow_button)
    wait_idle(harness, reopened)
    assert reopened.live.conversation.path()[-1].text == "ok"


def test_two_tabs_ask_at_once_and_answers_stay_in_their_tab(harness: Any, work: Path) -> None:
    harness.server.enqueue(
        tool_reply(("p1", "shell", {"command": "echo first tab"})),
        tool_reply(("q1", "shell", {"command": "echo second tab"})),
    )
    window = harness.open()
    use_tools(harness, work, "shell")
    first = new_tab(harness)
    type_and_send(harness.qtbot, first, "first")
    wait_asked(harness, first)
    second = new_tab(harness)
    type_and_send(harness.qtbot, second, "second")
    wait_asked(harness, second)
    assert [b.text for b in first.approval.rows[0].boxes] == ["echo first tab"]
    assert [b.text for b in second.approval.rows[0].boxes] == ["echo second tab"]
    assert not window.tabs.tabIcon(window.tabs.indexOf(first)).isNull()
    harness.server.enqueue(text_reply("second done"))
    row = second.approval.rows[0]
    row.reason.setText("no")
    click(harness, row.deny_button)
    wait_idle(harness, second)
    assert first.awaiting_approval and first.approval.rows[0].decision is None  # untouched
    harness.server.enqueue(text_reply("first done"))
    window.tabs.setCurrentWidget(first)
    click(harness, first.approval.rows[0].allow_button)
    wait_idle(harness, first)
    assert first.live.conversation.path()[-1].text == "first done"
    assert second.live.conversation.path()[-1].text == "second done"
    first_results = first.live.conversation.path()[2]
    assert first_results.kind is MessageKind.TOOL_RESULTS
    assert "first tab" in first_results.tool_results[0].text


def test_mcp_tool_is_shown_under_its_policy_name(harness: Any, work: Path) -> None:
    from threadline.tools.mcp.config import McpServerConfig

    harness.server.enqueue(
        tool_reply(("t1", "time__get_current_time", {"timezone": "Europe/Paris"})),
        text_reply("It is late."),
    )
    harness.open()
    harness.run(
        harness.engine.tool_servers.save_server(
            McpServerConfig("time", command=sys.executable, args=("-m", "mcp_server_time"))
        )
    )
    use_tools(harness, work, "time/*")
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "What time is it in Paris?")
    harness.qtbot.waitUntil(tab.approval.isVisible, timeout=WAIT_MS)  # the server starts with the turn
    (row,) = wait_asked(harness, tab)
    assert row.name_label.text() == "time/get_current_time"
    assert row.boxes[0].text == "timezone: Europe/Paris"
    click(harness, row.allow_button)
    wait_idle(harness, tab, timeout=WAIT_MS)
    assert "Europe/Paris" in sent_results(harness, 1)["t1"]
    assert tab.live.conversation.path()[-1].status is MessageStatus.COMPLETE
    # The chat view names the call and its result as the approval bar did, not by the wire name.
    call_message, results_message = tab.live.conversation.path()[1:3]
    assert call_message.tool_calls[0].name == "time__get_current_time"  # what is stored
    tab.view.scroll_to_message(call_message.id, flash=False)
    assert call_message.id in tab.view.visible_message_ids()
    shown = tab.view._docs[call_message.id].doc.toPlainText()
    assert 'Tool call: time/get_current_time timezone: "Europe/Paris"' in shown
    assert "time__" not in shown
    assert results_message.id in tab.view.visible_message_ids()
    assert "Result of time/get_current_time" in tab.view._docs[results_message.id].doc.toPlainText()


def test_the_bar_is_built_at_the_first_question_in_its_place(harness: Any, work: Path) -> None:
    """No bar until a turn asks; the first question shows a working one where Tab reaches it
    right after the chat (before the context strip and the message box), as when every tab built it."""
    from threadline.ui.approval.approval_bar import ApprovalBar

    harness.server.enqueue(tool_reply(("c1", "shell", {"command": "echo first"})), text_reply("Done."))
    harness.open()
    use_tools(harness, work, "shell")
    tab = new_tab(harness)
    assert tab.findChild(ApprovalBar) is None
    type_and_send(harness.qtbot, tab, "Use the shell")
    (row,) = wait_asked(harness, tab)
    assert tab.findChild(ApprovalBar) is tab.approval
    step = tab.view.nextInFocusChain()
    while not (step.isVisible() and step.focusPolicy() & Qt.FocusPolicy.TabFocus):
        step = step.nextInFocusChain()
    assert step is tab.approval.rows_area
    click(harness, row.allow_button)
    wait_idle(harness, tab)
    assert not tab.approval.isVisible() and not tab.awaiting_approval
    assert sent_results(harness, 1)["c1"].startswith("first\n")
