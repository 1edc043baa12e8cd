"""What is sent is derived from the path and always well-formed (docs/design.md §1).

Each invariant is tested with the situation that triggers it, and every built
request is also run through ``check_well_formed``.
"""

from __future__ import annotations

import pytest
from core_paths import PathBuilder, call, err, ok
from hypothesis import given, settings
from hypothesis import strategies as st

from threadline.core.messages import (
    CANCELLED_RESULT_TEXT,
    INTERRUPTED_RESULT_TEXT,
    UNANSWERED_RESULT_TEXT,
    Marker,
    MarkerType,
    Message,
    MessageKind,
    MessageStatus,
    Role,
    ToolResult,
)
from threadline.core.request import (
    CONTINUE_PROMPT,
    PLACEHOLDER_TOOL_NAME,
    BuiltRequest,
    Limits,
    NothingFitsError,
    SentMessage,
    build_request,
    check_well_formed,
    estimate_message,
    estimate_tokens_by_chars,
    flatten_result_text,
    path_history_tokens,
    sendable_messages,
    sendable_tokens,
    split_at_summary,
)
from threadline.core.tree import ConversationTree


def chars(text: str) -> int:
    """A deterministic estimator: one token per character."""
    return len(text)


def build(messages: list, **kw: object) -> BuiltRequest:  # type: ignore[type-arg]
    request = build_request(messages, **kw)  # type: ignore[arg-type]
    assert check_well_formed(request.messages) == [], request.messages
    return request


def cost(message: SentMessage) -> int:
    return estimate_message(message, chars)


# -- derivation before the invariants -------------------------------------------------------------


@pytest.mark.parametrize("status", [MessageStatus.CANCELLED, MessageStatus.INTERRUPTED])
def test_partial_reply_is_sent_with_its_text(status: MessageStatus) -> None:
    p = PathBuilder().prompt("tell me a story").reply("Once upon", status=status).prompt("go on")
    request = build(p.build())
    assert [m.role for m in request.messages] == [Role.USER, Role.ASSISTANT, Role.USER]
    assert request.messages[1].text == "Once upon"


def test_failed_reply_without_text_is_left_out_and_prompts_merge() -> None:
    p = PathBuilder().prompt("first").reply("", status=MessageStatus.FAILED).prompt("second")
    request = build(p.build())
    assert len(request.messages) == 1
    assert request.messages[0].text == "first\n\nsecond"
    assert request.messages[0].source_ids == (p.id_of(0), p.id_of(2))


def test_failed_reply_with_text_is_sent() -> None:
    p = PathBuilder().prompt("first").reply("half an ans", status=MessageStatus.FAILED).prompt("again")
    request = build(p.build())
    assert request.messages[1].text == "half an ans"


def test_streaming_reply_is_left_out() -> None:
    p = PathBuilder().prompt("q").reply("partial", status=MessageStatus.STREAMING)
    request = build(p.build())
    assert [m.text for m in request.messages] == ["q"]


def test_empty_cancelled_reply_is_left_out() -> None:
    p = PathBuilder().prompt("a").reply("", status=MessageStatus.CANCELLED).prompt("b")
    request = build(p.build())
    assert [m.text for m in request.messages] == ["a\n\nb"]


def test_adjacent_prompts_are_merged_so_roles_alternate() -> None:
    # A crash right after staging leaves two prompts one under the other.
    p = PathBuilder().prompt("hello").reply("hi").prompt("one").prompt("two")
    request = build(p.build())
    assert [m.role for m in request.messages] == [Role.USER, Role.ASSISTANT, Role.USER]
    assert request.messages[-1].text == "one\n\ntwo"


def test_nothing_to_send_raises_value_error() -> None:
    with pytest.raises(ValueError):
        build_request([])
    p = PathBuilder().prompt("a")
    p.summary("all of it", through=p.id_of(0))
    with pytest.raises(ValueError):
        build_request(p.build())


def test_summary_replaces_messages_through_summarised_through() -> None:
    p = PathBuilder().prompt("old question").reply("old answer").prompt("kept question").reply("kept answer")
    p.summary("They talked about old things.", through=p.id_of(1)).prompt("new question")
    request = build(p.build(), system="You are terse.")
    assert request.system.startswith("You are terse.\n\n")
    assert "They talked about old things." in request.system
    assert request.summary_id == p.id_of(4)
    assert [m.text for m in request.messages] == ["kept question", "kept answer", "new question"]
    assert all("old" not in m.text for m in request.messages)


def test_latest_summary_wins() -> None:
    p = PathBuilder().prompt("q1").reply("a1")
    p.summary("S1", through=p.id_of(1)).prompt("q2").reply("a2")
    p.summary("S2", through=p.id_of(4)).prompt("q3")
    request = build(p.build())
    assert "S2" in request.system and "S1" not in request.system
    assert [m.text for m in request.messages] == ["q3"]


def test_summary_without_system_prompt() -> None:
    p = PathBuilder().prompt("q1").reply("a1")
    p.summary("S", through=p.id_of(1)).prompt("q2")
    assert build(p.build()).system == "Summary of the earlier part of this conversation:\nS"


def test_continue_reply_adds_continue_prompt_after_partial() -> None:
    p = PathBuilder().prompt("write").reply("It was a dark", status=MessageStatus.INTERRUPTED)
    request = build(p.build(), continue_reply=True)
    assert [m.text for m in request.messages] == ["write", "It was a dark", CONTINUE_PROMPT]


def test_continue_reply_with_resumed_streaming_reply_sends_its_text() -> None:
    # Conversation.resume() flips the partial reply back to ``streaming``; the
    # request for the continuation must still carry the text so far.
    p = PathBuilder().prompt("write").reply("It was a dark", status=MessageStatus.STREAMING)
    request = build(p.build(), continue_reply=True)
    assert [m.text for m in request.messages] == ["write", "It was a dark", CONTINUE_PROMPT]


def test_continue_reply_is_ignored_when_path_ends_with_user() -> None:
    p = PathBuilder().prompt("write")
    assert [m.text for m in build(p.build(), continue_reply=True).messages] == ["write"]


# -- invariant 1: length --------------------------------------------------------------------------


def _tool_heavy_path() -> PathBuilder:
    # 0 P1, 1 A1, 2 P2, 3 A2(calls), 4 R2, 5 A3, 6 P3, 7 A4(calls), 8 R4
    return (
        PathBuilder()
        .prompt("a" * 40)
        .reply("b" * 40)
        .prompt("c" * 40)
        .reply("", call("c2"))
        .results(ok("c2", "r" * 40))
        .reply("d" * 40)
        .prompt("e" * 10)
        .reply("", call("c4"))
        .results(ok("c4", "s" * 10))
    )


def test_history_cap_cuts_at_a_user_prompt_never_at_tool_results() -> None:
    p = _tool_heavy_path()
    request = build(p.build(), limits=Limits(history_cap=5))
    # The last five messages would start at the tool results R2; the cut moves to P3.
    assert request.messages[0].source_ids == (p.id_of(6),)
    assert request.messages[0].text == "e" * 10
    assert len(request.messages) == 3
    assert request.dropped_messages == 6
    assert any("dropped 6" in r for r in request.repairs)


def test_history_cap_keeps_everything_when_it_fits() -> None:
    p = _tool_heavy_path()
    request = build(p.build(), limits=Limits(history_cap=9))
    assert len(request.messages) == 9 and request.dropped_messages == 0 and request.repairs == ()


def test_history_cap_never_touches_storage() -> None:
    p = _tool_heavy_path()
    path = p.build()
    before = [(m.id, m.text, m.tool_results) for m in path]
    build(path, limits=Limits(history_cap=3))
    assert [(m.id, m.text, m.tool_results) for m in path] == before


def test_token_budget_cuts_at_a_user_prompt() -> None:
    p = _tool_heavy_path()
    full = build(p.build(), estimator=chars)
    costs = [cost(m) for m in full.messages]
    from_p3 = sum(costs[6:])
    from_r2 = sum(costs[4:])
    from_p2 = sum(costs[2:])
    # A budget that fits the suffix starting at R2 (tool results) but not at P2.
    budget = from_p2 - 1
    assert from_r2 <= budget
    request = build(p.build(), estimator=chars, limits=Limits(token_budget=budget))
    assert request.messages[0].source_ids == (p.id_of(6),)
    assert request.estimated_tokens == from_p3 <= budget
    # A budget that fits from P2 keeps P2.
    request = build(p.build(), estimator=chars, limits=Limits(token_budget=from_p2))
    assert request.messages[0].source_ids == (p.id_of(2),)


def test_token_budget_counts_the_system_text() -> None:
    p = PathBuilder().prompt("x" * 10).reply("y" * 10).prompt("z" * 10)
    budget = 3 * 14 + 5
    assert len(build(p.build(), estimator=chars, limits=Limits(token_budget=budget)).messages) == 3
    request = build(p.build(), system="s" * 10, estimator=chars, limits=Limits(token_budget=budget))
    assert [m.text for m in request.messages] == ["z" * 10]
    assert request.estimated_tokens == 10 + 14


def test_nothing_fits_tells_the_user_how_to_continue() -> None:
    p = PathBuilder().prompt("short").reply("ok").prompt("x" * 500)
    with pytest.raises(NothingFitsError) as info:
        build_request(p.build(), estimator=chars, limits=Limits(token_budget=100))
    error = info.value
    assert error.needed == 504 and error.budget == 100
    text = error.user_message.lower()
    assert "compact" in text
    assert "context files" in text
    assert "new session" in text


def test_nothing_fits_when_the_system_text_alone_is_too_big() -> None:
    p = PathBuilder().prompt("hi")
    with pytest.raises(NothingFitsError):
        build_request(p.build(), system="s" * 200, estimator=chars, limits=Limits(token_budget=100))


def test_nothing_fits_when_last_turn_exceeds_history_cap() -> None:
    p = PathBuilder().prompt("q").reply("", call("c1")).results(ok("c1"))
    with pytest.raises(NothingFitsError) as info:
        build_request(p.build(), limits=Limits(history_cap=2))
    # The cap, not the context window, is what the turn exceeds: the message says so.
    text = info.value.user_message
    assert info.value.messages == 3 and "3 messages" in text and "more than the 2" in text
    assert "context window" not in text and "new session" in text


def test_length_is_measured_after_the_repairs() -> None:
    # The last turn ends with an unanswered call: the cancelled result that invariant 4
    # adds is part of what is sent, so it must count against the cap too.
    p = PathBuilder().prompt("q1").reply("a1").prompt("q2").reply("", call("c1"))
    request = build(p.build(), limits=Limits(history_cap=3))
    assert [m.text for m in request.messages] == ["q2", "", ""]
    with pytest.raises(NothingFitsError):
        build_request(p.build(), limits=Limits(history_cap=2))


def _messy_path() -> PathBuilder:
    return (
        PathBuilder()
        .prompt("x" * 300)
        .reply("", call("c0", "gone"))
        .results(ok("c0", "zero"))
        .reply("", call("c1", "Grep"), call("c2", "gone"))
        .results(ok("c2", "two"), ok("c7", "stray"))
        .reply("", status=MessageStatus.FAILED)
        .prompt("then?")
        .reply("", call("c3", "srv/grep"))
    )


def test_token_budget_is_respected_after_the_repairs() -> None:
    # Flattening and cancelled results add text after the cut: what is sent must still fit.
    fitted = 0
    for budget in range(10, 600, 3):
        try:
            request = build(_messy_path().build(), estimator=chars, limits=Limits(token_budget=budget))
        except NothingFitsError:
            continue
        fitted += 1
        assert request.estimated_tokens <= budget, budget
    assert fitted > 100


def test_prompt_that_carried_tool_results_is_kept_when_uncut() -> None:
    # The reply after the tool results failed with no text, so the results and the next
    # prompt merge into one user message carrying both.
    p = (
        PathBuilder()
        .prompt("a" * 40)
        .reply("", call("c1"))
        .results(ok("c1", "file contents"))
        .reply("", status=MessageStatus.FAILED)
        .prompt("what did it say?")
    )
    request = build(p.build())
    merged = request.messages[-1]
    assert merged.tool_results == (ok("c1", "file contents"),)
    assert merged.text == "what did it say?"
    assert merged.source_ids == (p.id_of(2), p.id_of(4))


@pytest.mark.parametrize("limit", ["cap", "budget"])
def test_cut_at_a_prompt_that_carried_tool_results_flattens_them(limit: str) -> None:
    p = (
        PathBuilder()
        .prompt("a" * 40)
        .reply("", call("c1"))
        .results(ok("c1", "file contents"))
        .reply("", status=MessageStatus.FAILED)
        .prompt("what did it say?")
    )
    expected_text = flatten_result_text(ok("c1", "file contents")) + "\n\nwhat did it say?"
    if limit == "cap":
        limits = Limits(history_cap=1)
    else:
        limits = Limits(token_budget=cost(SentMessage(Role.USER, text=expected_text)))
    request = build(p.build(), estimator=chars, limits=limits)
    assert len(request.messages) == 1
    first = request.messages[0]
    assert first.tool_results == ()
    assert first.text == expected_text
    assert "[Earlier tool call read_file returned]" in first.text


# -- invariant 2: the first message is a prompt ---------------------------------------------------


def test_first_message_tool_results_are_flattened_to_text() -> None:
    p = PathBuilder().prompt("list files").reply("", call("c1", "ls")).results(ok("c1", "a.txt", "ls"))
    p.reply("There is a.txt")
    p.summary("User asked for files.", through=p.id_of(1)).prompt("and now?")
    request = build(p.build())
    first = request.messages[0]
    assert first.role is Role.USER and first.tool_results == ()
    assert first.text == "[Earlier tool call ls returned]\na.txt"
    assert any("flattened tool results in the first message" in r for r in request.repairs)


def test_first_message_error_result_is_flattened_as_failed() -> None:
    p = PathBuilder().prompt("x").reply("", call("c1")).results(err("c1", "denied"))
    p.reply("sorry")
    p.summary("S", through=p.id_of(1)).prompt("ok")
    assert build(p.build()).messages[0].text == "[Earlier tool call read_file failed]\ndenied"


def test_leading_assistant_message_is_dropped() -> None:
    p = PathBuilder().prompt("q1").reply("a1")
    p.summary("S", through=p.id_of(0)).prompt("q2")
    request = build(p.build())
    assert [m.text for m in request.messages] == ["q2"]
    assert any("dropped an assistant message" in r for r in request.repairs)


# -- invariant 3: results answer the calls right before them --------------------------------------


def test_orphan_results_are_flattened() -> None:
    p = PathBuilder().prompt("q").reply("", call("c1")).results(ok("c1", "one"), ok("c9", "nine"))
    request = build(p.build())
    last = request.messages[-1]
    assert [r.call_id for r in last.tool_results] == ["c1"]
    assert "nine" in last.text and "one" not in last.text
    assert any("orphan" in r for r in request.repairs)


def test_results_after_a_reply_without_calls_are_orphans() -> None:
    p = PathBuilder().prompt("q").reply("plain").results(ok("c1", "stray"))
    request = build(p.build())
    assert request.messages[-1].tool_results == ()
    assert "stray" in request.messages[-1].text


def test_duplicate_result_keeps_the_first_and_flattens_the_copy() -> None:
    # Two identical results for one call: the first answers it, the copy is an orphan.
    result = ok("c1", "same")
    p = PathBuilder().prompt("q").reply("", call("c1")).results(result, result)
    request = build(p.build())
    assert request.messages[-1].tool_results == (result,)
    assert "same" in request.messages[-1].text


# -- invariant 4: every call has a result ---------------------------------------------------------


def test_unanswered_calls_at_the_end_are_answered_as_stopped_not_cancelled() -> None:
    # Crash while awaiting approval: the path ends with the calls. The user cancelled nothing.
    p = PathBuilder().prompt("q").reply("let me look", call("c1"), call("c2", "grep"))
    request = build(p.build())
    last = request.messages[-1]
    assert last.role is Role.USER
    assert [r.call_id for r in last.tool_results] == ["c1", "c2"]
    assert all(r.is_error and r.text == UNANSWERED_RESULT_TEXT for r in last.tool_results)
    assert not any(CANCELLED_RESULT_TEXT in r.text for r in last.tool_results)
    assert [r.tool_name for r in last.tool_results] == ["read_file", "grep"]
    assert any("added 2 results" in r for r in request.repairs)


def test_calls_of_an_interrupted_round_get_exactly_the_interrupted_text() -> None:
    """The process died while c2 ran: c1's result is kept, c2 is "interrupted", in call order."""
    p = PathBuilder().prompt("q").reply("", call("c1"), call("c2", "deploy")).results(ok("c1", "one"))
    p.last.status = MessageStatus.INTERRUPTED
    request = build([*p.build(), *PathBuilder().prompt("what happened?").build()])
    sent = request.messages[2]
    assert [(r.call_id, r.text) for r in sent.tool_results] == [
        ("c1", "one"),
        ("c2", INTERRUPTED_RESULT_TEXT),
    ]
    assert sent.tool_results[1].is_error and sent.tool_results[1].tool_name == "deploy"
    assert request.messages[-1].text == "what happened?"
    assert check_well_formed(request.messages) == []


def test_an_interrupted_round_at_the_end_is_answered_in_the_request() -> None:
    p = PathBuilder().prompt("q").reply("", call("c1")).results()
    p.last.status = MessageStatus.INTERRUPTED
    request = build(p.build())
    assert [r.text for r in request.messages[-1].tool_results] == [INTERRUPTED_RESULT_TEXT]
    assert check_well_formed(request.messages) == []


def test_a_refusal_stored_as_it_happened_still_says_cancelled_by_the_user() -> None:
    p = PathBuilder().prompt("q").reply("", call("c1")).cancelled(call("c1"), reason="no")
    request = build(p.build())
    assert request.messages[-1].tool_results[0].text == f"{CANCELLED_RESULT_TEXT} Reason: no"


def test_unanswered_calls_before_a_new_prompt_get_cancelled_results() -> None:
    p = PathBuilder().prompt("q").reply("", call("c1")).prompt("never mind, do this")
    request = build(p.build())
    last = request.messages[-1]
    assert last.text == "never mind, do this"
    assert [(r.call_id, r.is_error) for r in last.tool_results] == [("c1", True)]


def test_partially_answered_calls_are_completed_in_call_order() -> None:
    p = PathBuilder().prompt("q").reply("", call("c1"), call("c2"), call("c3")).results(ok("c2", "two"))
    request = build(p.build())
    results = request.messages[-1].tool_results
    assert [r.call_id for r in results] == ["c1", "c2", "c3"]
    assert [r.is_error for r in results] == [True, False, True]
    assert results[1].text == "two"


def test_unanswered_calls_in_the_middle_of_the_path() -> None:
    p = PathBuilder().prompt("q").reply("", call("c1")).prompt("other").reply("fine").prompt("next")
    request = build(p.build())
    assert request.messages[2].tool_results[0].call_id == "c1"


def test_cancelled_tool_uses_message_is_sent_as_results() -> None:
    p = PathBuilder().prompt("q").reply("", call("c1"), call("c2"))
    p.cancelled(call("c1"), call("c2"), reason="not now", completed=(ok("c1", "done"),))
    request = build(p.build())
    results = {r.call_id: r for r in request.messages[-1].tool_results}
    assert results["c1"].text == "done" and not results["c1"].is_error
    assert results["c2"].is_error and "not now" in results["c2"].text


# -- invariant 5: unknown tool names ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("stored", "known", "sent"),
    [
        ("Read_File", {"read_file", "grep"}, "read_file"),
        ("fs/read_file", {"read_file", "grep"}, "read_file"),
        ("fs__read_file", {"read_file"}, "read_file"),
        ("read_file", {"files/read_file"}, "files/read_file"),
        ("old_server/gone", {"read_file"}, PLACEHOLDER_TOOL_NAME),
        ("c/x", {"a/x", "b/x"}, PLACEHOLDER_TOOL_NAME),
    ],
)
def test_unknown_tool_names_are_repaired_or_mapped_to_placeholder(
    stored: str, known: set[str], sent: str
) -> None:
    p = PathBuilder().prompt("q").reply("", call("c1", stored)).results(ok("c1", "r", tool_name=stored))
    request = build(p.build(), known_tools=known)
    assert request.messages[1].tool_calls[0].name == sent
    assert request.messages[2].tool_results[0].tool_name == sent
    assert request.needs_placeholder_tool is (sent == PLACEHOLDER_TOOL_NAME)
    assert any(f"tool {stored!r} mapped to {sent!r}" == r for r in request.repairs)


def test_known_tool_names_are_untouched() -> None:
    p = PathBuilder().prompt("q").reply("", call("c1", "grep")).results(ok("c1"))
    for known in (None, {"grep"}):
        request = build(p.build(), known_tools=known)
        assert request.messages[1].tool_calls[0].name == "grep"
        assert not request.needs_placeholder_tool and request.repairs == ()


# -- the invariants together -----------------------------------------------------------------------


def test_invariants_apply_in_order_on_a_messy_path() -> None:
    p = _messy_path()
    request = build(p.build(), estimator=chars, known_tools={"grep"}, limits=Limits(token_budget=250))
    # 1: the cut lands at the prompt that carried the results of the second round;
    # 2: those results are flattened into it; 4: the last call gets a cancelled result;
    # 5: "srv/grep" is repaired to "grep".
    first, reply, results = request.messages
    assert "x" * 300 not in first.text and first.text.endswith("then?")
    assert "[Earlier tool call c2 returned]" not in first.text
    assert "[Earlier tool call read_file returned]\ntwo" in first.text
    assert "stray" in first.text and first.tool_results == ()
    assert reply.tool_calls[0].name == "grep"
    assert results.tool_results[0].is_error
    assert not request.needs_placeholder_tool


# -- the checker itself ------------------------------------------------------------------------------


def test_check_well_formed_reports_each_problem() -> None:
    u = SentMessage(Role.USER, text="hi")
    a = SentMessage(Role.ASSISTANT, text="hello")
    c = SentMessage(Role.ASSISTANT, tool_calls=(call("c1"),))
    r = SentMessage(Role.USER, tool_results=(ok("c1"),))
    assert check_well_formed([u, a, u]) == []
    assert check_well_formed([u, c, r]) == []
    assert check_well_formed([]) == ["no messages"]
    assert "first message is not a user prompt" in check_well_formed([a, u])
    assert "first message is not a user prompt" in check_well_formed([r])
    assert "last message is not from the user" in check_well_formed([u, a])
    assert "messages 0 and 1 have the same role" in check_well_formed([u, u])
    assert "message 1 is empty" in check_well_formed([u, SentMessage(Role.ASSISTANT), u])
    assert "tool calls of message 1 are not answered one to one" in check_well_formed([u, c, u])
    bad = SentMessage(Role.USER, tool_results=(ok("c9"),))
    assert "tool results of message 2 do not answer the calls before them" in check_well_formed([u, a, bad])
    carrying = SentMessage(Role.ASSISTANT, text="x", tool_results=(ok("c1"),))
    assert "assistant message 1 carries tool results" in check_well_formed([u, carrying, u])


def test_estimates() -> None:
    assert estimate_tokens_by_chars("") == 0
    assert estimate_tokens_by_chars("abcd") == 1
    assert estimate_tokens_by_chars("abcde") == 2
    message = SentMessage(
        Role.ASSISTANT,
        text="abcd",
        tool_calls=(call("c1", "ab", "{}"),),
        tool_results=(ToolResult("c", "xy"),),
    )
    assert estimate_message(message, chars) == 4 + 4 + 2 + 2 + 2


_STEP_NAMES = ["prompt", "reply", "calls", "results", "cancelled", "streaming", "failed", "empty", "summary"]
_STEPS = st.lists(st.sampled_from(_STEP_NAMES), max_size=30)
_MORE_STEPS = ["failed-empty", "summary-odd", "clear", "note", "odd-kind"]
"""Steps only the tree's reading meets: what no constructor pairs, clears and other markers."""


def follow(steps: list[str], words: list[str], draw: st.DataObject | None = None) -> list[Message]:
    """A path made by ``steps``, its texts taken from ``words`` in turn. With ``draw``, a
    summary covers a drawn earlier message and the odd kinds draw their role and kind."""
    p = PathBuilder()
    for i, step in enumerate(steps):
        text = words[i % len(words)]
        if step == "prompt":
            p.prompt(text)
        elif step == "reply":
            p.reply(text)
        elif step == "calls":
            p.reply(text, call(f"c{i}"), call(f"d{i}", arguments=text))
        elif step == "results":
            p.results(ok(f"c{i - 1}", text), err(f"d{i - 1}"))
        elif step == "cancelled":
            p.cancelled(call(f"c{i}"), reason=text)
        elif step == "streaming":
            p.reply(text, status=MessageStatus.STREAMING)
        elif step == "failed":
            p.reply(text, status=MessageStatus.FAILED)
        elif step == "failed-empty":
            p.reply("", status=MessageStatus.FAILED)
        elif step == "empty":
            p.reply("")
        elif step == "summary" and p.messages:
            through = 0 if draw is None else draw.draw(st.integers(0, len(p.messages) - 1))
            p.summary(text, through=p.id_of(through))
        elif step == "summary-odd" and p.messages:
            p.summary(text, through="not-on-the-path")
        elif step in ("clear", "note"):
            kind = MarkerType.CLEAR if step == "clear" else MarkerType.AGENT
            p._add(Message.marker_message(Marker(kind, text), parent_id=p._parent()))
        elif step == "odd-kind" and draw is not None:  # pairs no constructor makes; packing keeps them
            role = draw.draw(st.sampled_from(Role))
            kind_of = draw.draw(st.sampled_from(MessageKind))
            p._add(Message(id=f"odd{i}", parent_id=p._parent(), role=role, kind=kind_of, text=text))
    return p.build()


@settings(max_examples=200, deadline=None)
@given(steps=_STEPS, words=st.lists(st.text(max_size=40), min_size=1, max_size=5))
def test_sendable_tokens_is_the_estimate_of_the_sendable_messages(steps: list[str], words: list[str]) -> None:
    """The context meter's one-at-a-time sum equals estimating the whole converted list (merged
    turns, skipped summaries, streaming and empty replies included)."""
    body = follow(steps, words)
    for estimator in (estimate_tokens_by_chars, chars):
        expected = sum(estimate_message(m, estimator) for m in sendable_messages(body))
        assert sendable_tokens(body, estimator) == expected


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(st.sampled_from([*_STEP_NAMES, *_MORE_STEPS]), max_size=30),
    words=st.lists(st.text(max_size=40), min_size=1, max_size=5),
    data=st.data(),
)
def test_path_history_tokens_match_making_every_message(
    steps: list[str], words: list[str], data: st.DataObject
) -> None:
    """The meter's reading of a tree, packed messages read by their role, kind, status and
    length, equals splitting the made path at its summary and estimating the rest."""
    path = follow(steps, words, data)
    tree = ConversationTree(path)
    tree.pack(data.draw(st.lists(st.sampled_from([m.id for m in path]), unique=True)) if path else [])
    summary, body = split_at_summary(tree.path())
    assert path_history_tokens(tree) == (summary, sendable_tokens(body))
    assert path_history_tokens(ConversationTree(path)) == (summary, sendable_tokens(body))
