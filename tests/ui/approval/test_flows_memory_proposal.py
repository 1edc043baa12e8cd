"""A memory the model proposes, answered in the window (docs/memory.md).

The model (replayed OpenAI SSE) calls ``propose_memory``; the tab's approval bar shows it as a
memory card with Accept, Edit… and Decline. Accepted (clicked) it is saved and rides in the
system prompt of the next chat's request; declined it does not, and the model is told; edited
(typed) the edited text is what is saved.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import openai_text_stream, openai_tool_call_stream, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.memory import DECLINED_REASON, MEMORY_HEADING
from threadline.ui.approval.memory_proposal_row import MemoryProposalRow

PROPOSED = "Uses PostgreSQL 16"


def proposal_then_reply(harness: Any) -> None:
    harness.server.enqueue(
        sse_response(openai_tool_call_stream([("m1", "propose_memory", {"text": PROPOSED})])),
        sse_response(openai_text_stream(["Noted."])),
    )


def ask_in_a_chat(harness: Any) -> tuple[Any, MemoryProposalRow]:
    harness.open()
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                enabled_tools=("propose_memory",),
                approval_rules=(ApprovalRule("*", Approval.ALLOW),),  # allows all, yet a proposal asks
            )
        )
    )
    proposal_then_reply(harness)
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "I use PostgreSQL 16 everywhere")
    harness.qtbot.waitUntil(
        lambda: tab.approval.isVisibleTo(tab) and len(tab.approval.rows) == 1, timeout=WAIT_MS
    )
    (row,) = tab.approval.rows
    assert isinstance(row, MemoryProposalRow)
    assert row.text_label.text() == PROPOSED and not row.always_button.isVisible()
    assert tab.approval.title.text() == "The assistant suggests something to remember"
    return tab, row


def click(harness: Any, button: Any) -> None:
    assert button.isVisible() and button.isEnabled()
    harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def sent_results(harness: Any, index: int) -> dict[str, str]:
    body = harness.server.stream_requests()[index].body
    return {m["tool_call_id"]: str(m["content"]) for m in body["messages"] if m.get("role") == "tool"}


def next_chat_system(harness: Any) -> str:
    """The system prompt of a new chat's first request."""
    harness.server.enqueue(sse_response(openai_text_stream(["Hello."])))
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "Which database do I use?")
    wait_idle(harness, tab)
    first = harness.server.stream_requests()[-1].body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


def test_an_accepted_proposal_reaches_the_next_chats_request(harness: Any) -> None:
    tab, row = ask_in_a_chat(harness)
    assert harness.run(harness.engine.memory.memories()) == [], "nothing is saved before Accept"
    click(harness, row.allow_button)
    wait_idle(harness, tab)
    assert "accepted" in sent_results(harness, 1)["m1"]
    system = next_chat_system(harness)
    assert MEMORY_HEADING in system and f"- {PROPOSED}" in system


def test_a_declined_proposal_is_not_saved(harness: Any) -> None:
    tab, row = ask_in_a_chat(harness)
    click(harness, row.deny_button)
    wait_idle(harness, tab)
    assert DECLINED_REASON in sent_results(harness, 1)["m1"]
    assert harness.run(harness.engine.memory.memories()) == []
    assert PROPOSED not in next_chat_system(harness)


def test_edit_then_accept_saves_the_edited_text(harness: Any) -> None:
    tab, row = ask_in_a_chat(harness)
    click(harness, row.edit_button)
    harness.qtbot.waitUntil(lambda: row.editor.isVisible() and row.editor.hasFocus(), timeout=WAIT_MS)
    row.editor.selectAll()
    harness.qtbot.keyClicks(row.editor, "Uses PostgreSQL 17 at work")
    harness.qtbot.keyClick(row.editor, Qt.Key.Key_Return)
    wait_idle(harness, tab)
    assert "edited it and accepted" in sent_results(harness, 1)["m1"]
    assert [m.text for m in harness.run(harness.engine.memory.memories())] == ["Uses PostgreSQL 17 at work"]
    system = next_chat_system(harness)
    assert "- Uses PostgreSQL 17 at work" in system and PROPOSED not in system


def test_allow_all_leaves_the_proposal_to_its_own_answer(harness: Any) -> None:
    harness.open()
    harness.run(
        harness.engine.agents.save_agent(
            AgentConfig("default", "Default", enabled_tools=("propose_memory", "notes"))
        )
    )
    harness.server.enqueue(
        sse_response(
            openai_tool_call_stream(
                [
                    ("n1", "notes", {"action": "set", "key": "db", "value": "pg16"}),
                    ("m1", "propose_memory", {"text": PROPOSED}),
                ]
            )
        ),
        sse_response(openai_text_stream(["Noted."])),
    )
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "I use PostgreSQL 16 everywhere")
    harness.qtbot.waitUntil(lambda: len(tab.approval.rows) == 2, timeout=WAIT_MS)
    notes, proposal = tab.approval.rows
    click(harness, tab.approval.allow_all_button)
    assert notes.decision is not None and notes.decision.allow
    assert proposal.decision is None and tab.approval.isVisible(), "the memory waits for its own answer"
    click(harness, proposal.deny_button)
    wait_idle(harness, tab)
    results = sent_results(harness, 1)
    assert "pg16" in results["n1"] and DECLINED_REASON in results["m1"]
    assert harness.run(harness.engine.memory.memories()) == []
