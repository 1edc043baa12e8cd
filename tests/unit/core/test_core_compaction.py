"""Compaction policy: what is summarised, what is kept verbatim, how the request escalates."""

from __future__ import annotations

import pytest

from threadline.core.compaction import (
    ESCALATIONS,
    NothingToCompactError,
    plan_compaction,
    summary_request,
)
from threadline.core.conversation import Conversation
from threadline.core.messages import MessageKind, ToolCall, ToolResult
from threadline.core.request import build_request


def chat(turns: int, *, tool_output: str = "") -> Conversation:
    conversation = Conversation("s")
    for index in range(1, turns + 1):
        conversation.stage(f"Q{index}")
        if tool_output and index == 1:
            conversation.begin_reply()
            conversation.finish_reply(tool_calls=(ToolCall("c1", "fetch", "{}"),))
            conversation.decided()
            conversation.record_tool_results((ToolResult("c1", tool_output, tool_name="fetch"),))
        conversation.begin_reply()
        conversation.append_text(f"A{index}")
        conversation.finish_reply()
    return conversation


def test_keeps_the_last_turns_verbatim_and_summarises_the_rest() -> None:
    conversation = chat(4)
    plan = plan_compaction(conversation.path(), keep_turns=2)
    assert [m.text for m in plan.messages] == ["Q1", "A1", "Q2", "A2"]
    assert plan.summarised_through == conversation.path()[3].id
    assert plan.previous_summary == ""


def test_a_short_chat_has_nothing_to_compact() -> None:
    with pytest.raises(NothingToCompactError):
        plan_compaction(chat(2).path(), keep_turns=2)


def test_builds_on_the_previous_summary_and_only_adds_what_came_after() -> None:
    conversation = chat(4)
    first = plan_compaction(conversation.path(), keep_turns=2)
    conversation.add_summary("Earlier: Q1 and Q2.", first.summarised_through)
    for index in (5, 6):
        conversation.stage(f"Q{index}")
        conversation.begin_reply()
        conversation.append_text(f"A{index}")
        conversation.finish_reply()
    second = plan_compaction(conversation.path(), keep_turns=2)
    assert second.previous_summary == "Earlier: Q1 and Q2."
    assert [m.text for m in second.messages] == ["Q3", "A3", "Q4", "A4"]
    request = summary_request(second, ESCALATIONS[0], "mention numbers")
    text = request.messages[0].text
    assert text.startswith("Summary so far:\nEarlier: Q1 and Q2.")
    assert "Q3" in text and "Q5" not in text and "mention numbers" in text
    sent = build_request(conversation.path())
    assert "Earlier: Q1 and Q2." in sent.system  # until the new summary is stored, the old one applies
    conversation.add_summary("Everything up to Q4.", second.summarised_through)
    sent = build_request(conversation.path())
    assert "Everything up to Q4." in sent.system and [m.text for m in sent.messages] == [
        "Q5",
        "A5",
        "Q6",
        "A6",
    ]


def test_old_tool_output_is_pruned_and_escalation_shortens_further() -> None:
    conversation = chat(3, tool_output="x" * 5000)
    plan = plan_compaction(conversation.path(), keep_turns=1)
    gentle = summary_request(plan, ESCALATIONS[0]).messages[0].text
    hard = summary_request(plan, ESCALATIONS[1]).messages[0].text
    assert "[tool result fetch]" in gentle
    assert "x" * 401 not in gentle and "characters left out" in gentle
    assert len(hard) < len(gentle)
    fewer = summary_request(plan, ESCALATIONS[2]).messages[0].text
    assert "A2" not in fewer and "Q1" in fewer  # the newest pair is left out last


def test_the_summary_request_is_well_formed_and_has_no_tools() -> None:
    plan = plan_compaction(chat(3).path(), keep_turns=1)
    request = summary_request(plan, ESCALATIONS[0])
    assert len(request.messages) == 1 and request.messages[0].is_prompt
    assert request.system and not request.needs_placeholder_tool


def test_mid_turn_summary_reply_can_be_regenerated() -> None:
    """Automatic compaction puts the summary between the staged prompt and its reply."""
    conversation = chat(3)
    plan = plan_compaction(conversation.path(), keep_turns=1)
    conversation.stage("Q4")
    summary = conversation.add_summary("S", plan.summarised_through)
    reply = conversation.begin_reply()
    conversation.append_text("A4")
    conversation.finish_reply()
    assert reply.parent_id == summary.id
    conversation.regenerate(reply.id)
    again = conversation.begin_reply()
    assert again.parent_id == summary.id and conversation.tree.version(again.id).count == 2
    assert [m.kind for m in conversation.path()][-2:] == [MessageKind.SUMMARY, MessageKind.RESPONSE]


def test_the_newest_messages_left_out_of_the_summary_are_sent_after_it() -> None:
    """The last escalation leaves the newest two messages out of the summary request; the
    summary then stands only for what it was given, and the two are still sent."""
    conversation = chat(3)
    plan = plan_compaction(conversation.path(), keep_turns=1)
    last = ESCALATIONS[-1]
    assert last.exclude_newest == 2
    assert [m.text for m in plan.summarised(last)] == ["Q1", "A1"]
    a1 = conversation.path()[1]
    assert plan.through(last) == a1.id
    assert plan.through(ESCALATIONS[0]) == plan.summarised_through == conversation.path()[3].id
    asked = summary_request(plan, last).messages[0].text
    assert "Q1" in asked and "Q2" not in asked
    conversation.add_summary("S: Q1 was answered.", plan.through(last))
    sent = build_request(conversation.path())
    assert "S: Q1 was answered." in sent.system
    assert [m.text for m in sent.messages] == ["Q2", "A2", "Q3", "A3"]


def test_what_is_left_out_starts_at_a_prompt_or_tool_results_never_a_reply() -> None:
    conversation = chat(2)
    conversation.stage("Q3")  # compacting everything (the overflow banner) takes the staged prompt too
    plan = plan_compaction(conversation.path(), keep_turns=0)
    last = ESCALATIONS[-1]
    assert [m.text for m in plan.summarised(last)] == ["Q1", "A1"]  # A2 cannot start a request: Q2 goes too
    conversation.add_summary("S", plan.through(last))
    assert [m.text for m in build_request(conversation.path()).messages] == ["Q2", "A2", "Q3"]

    one_turn = chat(1)
    one_turn.stage("Q2")
    plan = plan_compaction(one_turn.path(), keep_turns=0)  # Q1 A1 Q2: no start leaves anything
    assert plan.summarised(last) == plan.messages and plan.through(last) == plan.summarised_through

    with_tools = chat(2, tool_output="the fetched page")
    plan = plan_compaction(with_tools.path(), keep_turns=1)  # Q1, its tool call, the result, A1
    assert [m.kind for m in plan.summarised(last)] == [MessageKind.PROMPT, MessageKind.TOOL_CALLS]
    with_tools.add_summary("S", plan.through(last))
    sent = build_request(with_tools.path())
    assert "the fetched page" in sent.messages[0].text and sent.messages[0].is_prompt
    assert [m.text for m in sent.messages[1:]] == ["A1", "Q2", "A2"]
