"""Compaction policy: what is summarised, what is kept verbatim, and the pieces it is summarised in."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from threadline.core.compaction import (
    MESSAGE_CHARS,
    TOOL_OUTPUT_CHARS,
    NothingToCompactError,
    condense_request,
    message_tokens,
    plan_compaction,
    summary_request,
    take_piece,
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
    assert [m.text for m in second.kept] == ["Q5", "A5", "Q6", "A6"]
    request = summary_request(second.previous_summary, second.excerpts(), "mention numbers")
    text = request.messages[0].text
    assert text.startswith("Summary so far:\nEarlier: Q1 and Q2.")
    assert "Q3" in text and "Q5" not in text and "mention numbers" in text
    sent = build_request(conversation.path())
    assert "Earlier: Q1 and Q2." in sent.system  # until the new summary is stored, the old one applies
    conversation.add_summary("Everything up to Q4.", second.summarised_through)
    sent = build_request(conversation.path())
    assert "Everything up to Q4." in sent.system
    assert [m.text for m in sent.messages] == ["Q5", "A5", "Q6", "A6"]


def test_old_tool_output_is_pruned_and_long_messages_clipped() -> None:
    conversation = chat(3, tool_output="x" * 5000)
    conversation.stage("y" * (MESSAGE_CHARS + 500))
    plan = plan_compaction(conversation.path(), keep_turns=0)
    text = "\n\n".join(plan.excerpts())
    assert "[tool result fetch]" in text
    assert "x" * (TOOL_OUTPUT_CHARS + 1) not in text and "4600 characters left out" in text
    assert "y" * (MESSAGE_CHARS + 1) not in text and "500 characters left out" in text


def test_the_summary_request_is_well_formed_and_has_no_tools() -> None:
    plan = plan_compaction(chat(3).path(), keep_turns=1)
    request = summary_request(plan.previous_summary, plan.excerpts(), words=120)
    assert len(request.messages) == 1 and request.messages[0].is_prompt
    assert request.system and not request.needs_placeholder_tool
    assert "under 120 words" in request.messages[0].text
    condensed = condense_request("A long summary.", 40).messages[0].text
    assert condensed.startswith("Summary so far:\nA long summary.") and "under 40 words" in condensed


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


def test_the_window_decides_how_many_turns_stay_word_for_word() -> None:
    conversation = Conversation("s")
    for index, size in enumerate((400, 400, 400, 40), start=1):
        conversation.stage(f"Q{index} " + "w" * size)
        conversation.begin_reply()
        conversation.append_text(f"A{index}")
        conversation.finish_reply()
    path = conversation.path()
    assert [m.text[:2] for m in plan_compaction(path, keep_turns=3).kept] == [
        "Q2",
        "A2",
        "Q3",
        "A3",
        "Q4",
        "A4",
    ]
    roomy = plan_compaction(path, keep_turns=3, keep_tokens=150)
    assert [m.text[:2] for m in roomy.kept] == ["Q3", "A3", "Q4", "A4"]
    assert roomy.summarised_through == path[3].id
    tight = plan_compaction(path, keep_turns=3, keep_tokens=5)  # the latest turn stays whatever its size
    assert [m.text[:2] for m in tight.kept] == ["Q4", "A4"]
    assert message_tokens(path[0]) == 101


def test_the_staged_prompt_is_compacted_too_when_nothing_is_kept() -> None:
    conversation = chat(2)
    conversation.stage("Q3")  # compacting everything (the overflow banner) takes the staged prompt too
    plan = plan_compaction(conversation.path(), keep_turns=0)
    assert [m.text for m in plan.messages] == ["Q1", "A1", "Q2", "A2", "Q3"] and plan.kept == ()


@given(
    st.lists(st.text(alphabet="ab \n", min_size=1, max_size=300), min_size=1, max_size=8),
    st.integers(min_value=20, max_value=400),
)
def test_pieces_fit_their_room_and_lose_nothing(excerpts: list[str], room: int) -> None:
    """Every piece fits (a message longer than the room is split across pieces), and read
    back in order the pieces hold every excerpt's words."""
    pieces: list[list[str]] = []
    rest = list(excerpts)
    while rest:
        piece, rest = take_piece(rest, room)
        assert piece
        assert sum(len(t) for t in piece) + 2 * (len(piece) - 1) <= room
        pieces.append(piece)
        assert len(pieces) <= 10_000
    words = [w for piece in pieces for t in piece for w in t.split() if w not in ("…", "(continued)")]
    assert "".join(words) == "".join(w for t in excerpts for w in t.split())
