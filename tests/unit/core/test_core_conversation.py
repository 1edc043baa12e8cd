"""The steps of a turn on a Conversation, and the multi-session case from the seeds."""

from __future__ import annotations

import pytest
from core_paths import call, ok

from threadline.core.conversation import Conversation
from threadline.core.messages import (
    CANCELLED_RESULT_TEXT,
    MessageKind,
    MessageStatus,
    RequestMetadata,
)
from threadline.core.request import CONTINUE_PROMPT, build_request, check_well_formed
from threadline.core.tree import TreeError
from threadline.core.turn import IllegalTransition, TurnState


def sent_ok(c: Conversation, **kw: object) -> list[str]:
    request = build_request(c.path(), **kw)  # type: ignore[arg-type]
    assert check_well_formed(request.messages) == []
    return [m.text for m in request.messages]


def test_a_plain_turn() -> None:
    c = Conversation("s")
    assert c.ready_for_input and c.staged is None and c.reply is None
    prompt = c.stage("hello")
    assert c.state is TurnState.STREAMING and c.staged == prompt.id and not c.ready_for_input
    assert sent_ok(c) == ["hello"]
    reply = c.begin_reply(RequestMetadata(model="m"))
    assert reply.status is MessageStatus.STREAMING and reply.parent_id == prompt.id
    assert sent_ok(c) == ["hello"]  # the streaming reply is not sent
    c.append_text("Hi ")
    assert c.append_text("there").text == "Hi there"
    done = c.finish_reply(metadata=RequestMetadata(model="m", output_tokens=2))
    assert done is reply and reply.status is MessageStatus.COMPLETE
    assert reply.metadata is not None and reply.metadata.ended_at is not None
    assert reply.metadata.output_tokens == 2
    assert c.state is TurnState.IDLE and c.staged is None and c.reply is None
    assert [m.text for m in c.path()] == ["hello", "Hi there"]


def test_approved_tool_round() -> None:
    c = Conversation("s")
    c.stage("read a.txt")
    reply = c.begin_reply()
    c.append_text("Reading.")
    calls = (call("c1"), call("c2", "grep"))
    c.finish_reply(tool_calls=calls)
    assert c.state is TurnState.AWAITING_APPROVAL
    assert reply.kind is MessageKind.TOOL_CALLS and c.pending_tool_calls() == calls
    assert c.staged is not None
    c.decided()
    assert c.state is TurnState.RUNNING_TOOLS and c.pending_tool_calls() == calls
    results = c.record_tool_results((ok("c2", "g", "grep"), ok("c1", "A")))
    assert results.kind is MessageKind.TOOL_RESULTS
    assert [r.call_id for r in results.tool_results] == ["c1", "c2"]  # in call order
    assert c.state is TurnState.STREAMING and c.pending_tool_calls() == ()
    sent_ok(c)
    c.begin_reply()
    c.append_text("a.txt says A")
    c.finish_reply()
    assert c.state is TurnState.IDLE and c.staged is None
    assert [m.kind for m in c.path()] == [
        MessageKind.PROMPT,
        MessageKind.TOOL_CALLS,
        MessageKind.TOOL_RESULTS,
        MessageKind.RESPONSE,
    ]


def test_denied_tool_round_records_the_reason() -> None:
    c = Conversation("s")
    c.stage("delete everything")
    c.begin_reply()
    c.finish_reply(tool_calls=(call("c1", "rm"),))
    c.decided()
    message = c.record_tool_results((), refused_reason="absolutely not")
    assert message.kind is MessageKind.CANCELLED_TOOL_USES and message.text == "absolutely not"
    (result,) = message.tool_results
    assert result.is_error and result.tool_name == "rm"
    assert result.text == f"{CANCELLED_RESULT_TEXT} Reason: absolutely not"
    assert c.state is TurnState.STREAMING
    sent_ok(c)


def test_partly_approved_round_answers_every_call() -> None:
    c = Conversation("s")
    c.stage("q")
    c.begin_reply()
    c.finish_reply(tool_calls=(call("c1"), call("c2")))
    c.decided()
    message = c.record_tool_results((ok("c1", "fine"),), refused_reason="no")
    by_id = {r.call_id: r for r in message.tool_results}
    assert not by_id["c1"].is_error and by_id["c2"].is_error
    sent_ok(c)


def test_cancel_while_streaming_keeps_the_partial_text() -> None:
    c = Conversation("s")
    c.stage("story")
    reply = c.begin_reply()
    c.append_text("Once")
    changed = c.cancel()
    assert changed == [reply] and reply.status is MessageStatus.CANCELLED
    assert reply.metadata is not None and reply.metadata.stop_reason == "cancelled"
    assert c.state is TurnState.IDLE and c.staged is None and reply.text == "Once"
    assert sent_ok(c, continue_reply=True) == ["story", "Once", CONTINUE_PROMPT]


def test_cancel_before_the_reply_began() -> None:
    c = Conversation("s")
    c.stage("q")
    assert c.cancel() == []
    assert c.ready_for_input and c.staged is None
    assert [m.text for m in c.path()] == ["q"]


@pytest.mark.parametrize("decided", [False, True])
def test_cancel_during_a_tool_round_answers_the_calls(decided: bool) -> None:
    c = Conversation("s")
    c.stage("q")
    c.begin_reply()
    c.finish_reply(tool_calls=(call("c1"), call("c2")))
    if decided:
        c.decided()
    changed = c.cancel("stop")
    assert len(changed) == 1 and changed[0].kind is MessageKind.CANCELLED_TOOL_USES
    assert all(r.is_error for r in changed[0].tool_results)
    assert c.ready_for_input and c.staged is None
    c.stage("next")
    sent_ok(c)


def test_cancel_while_tools_run_keeps_results_that_came_back() -> None:
    c = Conversation("s")
    c.stage("q")
    c.begin_reply()
    c.finish_reply(tool_calls=(call("c1"), call("c2")))
    c.decided()
    (message,) = c.cancel("stop", completed=(ok("c1", "written"),))
    by_id = {r.call_id: r for r in message.tool_results}
    assert by_id["c1"].text == "written" and not by_id["c1"].is_error
    assert by_id["c2"].is_error


def test_cancel_when_idle_does_nothing() -> None:
    c = Conversation("s")
    assert c.cancel() == [] and c.fail("x") == []
    assert c.state is TurnState.IDLE


def test_fail_keeps_partial_text_and_the_prompt() -> None:
    c = Conversation("s")
    c.stage("q")
    reply = c.begin_reply()
    c.append_text("half")
    assert c.fail("network down") == [reply]
    assert reply.status is MessageStatus.FAILED and reply.text == "half"
    assert reply.metadata is not None and reply.metadata.error == "network down"
    assert c.state is TurnState.FAILED and c.ready_for_input and c.staged is None
    c.stage("again")
    assert sent_ok(c) == ["q", "half", "again"]


def test_fail_without_text_then_regenerate() -> None:
    c = Conversation("s")
    prompt = c.stage("q")
    reply = c.begin_reply()
    c.fail("500")
    assert reply.status is MessageStatus.FAILED
    assert c.regenerate(reply.id).id == prompt.id
    assert sent_ok(c) == ["q"]
    c.begin_reply()
    c.append_text("answer")
    c.finish_reply()
    assert [m.text for m in c.path()] == ["q", "answer"]


def test_fail_during_approval_answers_the_calls() -> None:
    c = Conversation("s")
    c.stage("q")
    c.begin_reply()
    c.finish_reply(tool_calls=(call("c1"),))
    changed = c.fail("crashed")
    assert changed[-1].kind is MessageKind.CANCELLED_TOOL_USES
    assert c.state is TurnState.FAILED


@pytest.mark.parametrize("status", [MessageStatus.CANCELLED, MessageStatus.INTERRUPTED])
def test_resume_continues_the_partial_reply_in_place(status: MessageStatus) -> None:
    c = Conversation("s")
    c.stage("write")
    reply = c.begin_reply()
    c.append_text("It was")
    c.cancel()
    reply.status = status
    assert c.resume(reply.id) is reply
    assert reply.status is MessageStatus.STREAMING and c.reply is reply and c.staged == reply.parent_id
    assert sent_ok(c, continue_reply=True) == ["write", "It was", CONTINUE_PROMPT]
    c.append_text(" a dark night")
    c.finish_reply()
    assert reply.text == "It was a dark night" and reply.status is MessageStatus.COMPLETE
    assert len(c.tree) == 2 and c.ready_for_input


def test_resume_is_only_for_partial_replies() -> None:
    c = Conversation("s")
    prompt = c.stage("q")
    reply = c.begin_reply()
    c.finish_reply(tool_calls=(call("c1"),))
    with pytest.raises(TreeError):
        c.resume(reply.id)  # busy
    c.cancel()
    with pytest.raises(TreeError):
        c.resume(reply.id)  # complete, with tool calls
    with pytest.raises(TreeError):
        c.resume(prompt.id)


def test_steps_out_of_order_are_refused() -> None:
    c = Conversation("s")
    with pytest.raises(TreeError):
        c.begin_reply()
    with pytest.raises(TreeError):
        c.append_text("x")
    with pytest.raises(TreeError):
        c.record_tool_results(())
    with pytest.raises(IllegalTransition):
        c.decided()
    c.stage("q")
    with pytest.raises(TreeError):
        c.stage("again")
    with pytest.raises(TreeError):
        c.append_text("no reply yet")
    with pytest.raises(TreeError):
        c.finish_reply()  # no reply began
    c.begin_reply()
    with pytest.raises(TreeError):
        c.begin_reply()
    with pytest.raises(IllegalTransition):
        c.decided()
    c.finish_reply()
    with pytest.raises(TreeError):
        c.finish_reply()


def test_summary_is_added_between_turns() -> None:
    c = Conversation("s")
    c.stage("q1")
    c.begin_reply()
    c.append_text("a1")
    c.finish_reply()
    summary = c.add_summary("S", c.path()[1].id)
    assert summary.kind is MessageKind.SUMMARY and c.tree.active_leaf == summary.id
    c.stage("q2")
    request = build_request(c.path())
    assert "S" in request.system and [m.text for m in request.messages] == ["q2"]


# -- the case that broke the original multi-session design -------------------------------------------


def full_turn(c: Conversation, text: str, *, with_tools: bool) -> None:
    assert c.ready_for_input and c.staged is None
    prompt = c.stage(text)
    assert c.staged == prompt.id
    assert build_request(c.path()).messages[-1].text == text or with_tools
    c.begin_reply()
    c.append_text(f"re: {text}")
    if with_tools:
        c.finish_reply(tool_calls=(call(f"{prompt.id}-t"),))
        c.decided()
        c.record_tool_results((ok(f"{prompt.id}-t", f"result for {text}"),))
        assert c.staged == prompt.id
        c.begin_reply()
        c.append_text(f"done: {text}")
    c.finish_reply()
    assert c.ready_for_input and c.staged is None


def test_two_sessions_alternating_keep_separate_clean_state() -> None:
    registry = {"A": Conversation("A"), "B": Conversation("B")}
    # Tabs hold references to the registry's one object per id, never copies.
    tab_a, tab_b = registry["A"], registry["B"]
    order = [("A", "a1"), ("B", "b1"), ("A", "a2"), ("B", "b2")]
    for index, (session, text) in enumerate(order):
        tab = tab_a if session == "A" else tab_b
        other = tab_b if session == "A" else tab_a
        assert tab is registry[session]
        full_turn(tab, text, with_tools=index % 2 == 1)
        assert other.ready_for_input and other.staged is None
    for session, conversation in registry.items():
        prompts = [m.text for m in conversation.path() if m.kind is MessageKind.PROMPT]
        assert prompts == [f"{session.lower()}1", f"{session.lower()}2"]
        assert all(
            m.text.endswith(("1", "2")) and session.lower() in m.text for m in conversation.path() if m.text
        )
        sent_ok_after = build_request([*conversation.path()]).messages
        assert sent_ok_after[-1].role.value == "assistant"  # nothing pending in either session
    assert not {m.id for m in registry["A"].tree} & {m.id for m in registry["B"].tree}


def test_a_turn_interrupted_in_one_session_does_not_leak_into_the_other() -> None:
    a, b = Conversation("A"), Conversation("B")
    a.stage("a1")
    a.begin_reply()
    a.append_text("partial")
    # Switch to B while A streams: B is ready and starts its own turn.
    assert b.ready_for_input and b.staged is None
    full_turn(b, "b1", with_tools=False)
    a.cancel()
    full_turn(a, "a2", with_tools=False)
    full_turn(b, "b2", with_tools=True)
    assert [m.text for m in a.path() if m.kind is MessageKind.PROMPT] == ["a1", "a2"]
    assert [m.text for m in b.path() if m.kind is MessageKind.PROMPT] == ["b1", "b2"]
    assert a.staged is None and b.staged is None
