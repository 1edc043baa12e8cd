"""The steps of a turn on a Conversation, and the multi-session case from the seeds."""

from __future__ import annotations

import pytest
from core_paths import call, ok

from threadline.core.conversation import Conversation
from threadline.core.messages import (
    CANCELLED_RESULT_TEXT,
    INTERRUPTED_RESULT_TEXT,
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
    assert [r.call_id for r in changed[0].tool_results] == ["c1", "c2"]
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
    assert build_request(c.path()).messages[-1].text == text
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


# -- history never rewritten: only a leaf grows in place ------------------------------------------


def stopped_reply_with_a_later_turn() -> tuple[Conversation, str, str]:
    """A reply stopped at "It was" and a later turn built on it; the ids of both."""
    c = Conversation("s")
    c.stage("write")
    reply = c.begin_reply()
    c.append_text("It was")
    c.cancel()
    later = c.stage("go on")
    c.begin_reply()
    c.append_text("a dark night")
    c.finish_reply()
    return c, reply.id, later.id


def test_continuing_a_reply_with_later_turns_makes_a_new_version() -> None:
    c, original_id, later_id = stopped_reply_with_a_later_turn()
    before = [(m.id, m.text, m.status) for m in c.tree]
    copy = c.resume(original_id)
    assert copy.id != original_id and copy.parent_id == c.tree.get(original_id).parent_id
    assert copy.text == "It was" and copy.status is MessageStatus.STREAMING and c.reply is copy
    assert c.tree.version(copy.id).index == c.tree.version(copy.id).count == 2
    # The original and the turn built on it are untouched.
    assert [(m.id, m.text, m.status) for m in c.tree if m.id != copy.id] == before
    assert [m.id for m in c.tree.children(original_id)] == [later_id]
    assert sent_ok(c, continue_reply=True) == ["write", "It was", CONTINUE_PROMPT]
    c.append_text(" a quiet morning")
    c.finish_reply()
    assert copy.text == "It was a quiet morning" and c.tree.get(original_id).text == "It was"
    # "‹ 1/2 ›" goes back to the original, down the branch built on it.
    leaf = c.switch_version(copy.id, -1)
    assert [m.text for m in c.path()][:3] == ["write", "It was", "go on"] and leaf != copy.id


def test_a_continued_copy_starts_its_own_timing() -> None:
    c, original_id, _ = stopped_reply_with_a_later_turn()
    original = c.tree.get(original_id)
    original.metadata = RequestMetadata(provider="p", model="m", stop_reason="cancelled", error="x")
    copy = c.resume(original_id)
    assert copy.metadata is not None and copy.metadata.model == "m"
    assert copy.metadata.ended_at is None and copy.metadata.stop_reason == "" and copy.metadata.error == ""
    assert original.metadata.stop_reason == "cancelled"


def test_edit_regenerate_and_answer_under_children_add_siblings() -> None:
    c, _, later_id = stopped_reply_with_a_later_turn()
    texts = {m.id: m.text for m in c.tree}
    edited = c.edit(later_id, "go on, please")
    assert edited.id != later_id and c.tree.version(edited.id).count == 2
    c.cancel()
    c.answer(c.tree.get(later_id).id)
    new_reply = c.begin_reply()
    assert len(c.tree.siblings(new_reply.id)) == 2
    c.cancel()
    assert all(c.tree.get(mid).text == text for mid, text in texts.items())


# -- tool rounds stored as running, and interrupted ones --------------------------------------------


def tool_round_interrupted(*calls_: str, finished: tuple[str, ...] = ()) -> tuple[Conversation, str]:
    """A round whose tools were running when the process died; returns the reloaded conversation."""
    c = Conversation("s")
    c.stage("deploy")
    reply = c.begin_reply()
    c.finish_reply(tool_calls=tuple(call(cid, "deploy") for cid in calls_))
    c.decided()
    answer = c.begin_tools()
    assert answer.status is MessageStatus.STREAMING and answer.parent_id == reply.id
    assert c.tree.active_leaf == answer.id and c.running_tools is answer
    for cid in finished:
        c.add_tool_result(ok(cid, f"done {cid}", "deploy"))
    answer.status = MessageStatus.INTERRUPTED  # what the store does to a dead writer's row
    return Conversation("s", c.tree), answer.id


def test_a_tool_round_is_stored_running_and_completed_in_place() -> None:
    c = Conversation("s")
    c.stage("q")
    c.begin_reply()
    c.finish_reply(tool_calls=(call("c1"), call("c2")))
    c.decided()
    answer = c.begin_tools()
    c.add_tool_result(ok("c1"))
    assert answer.tool_results == (ok("c1"),)
    done = c.record_tool_results((ok("c1"), ok("c2")))
    assert done is answer and answer.status is MessageStatus.COMPLETE
    assert answer.kind is MessageKind.TOOL_RESULTS and c.running_tools is None
    assert c.state is TurnState.STREAMING and len(c.tree) == 3


def test_stopping_while_tools_run_fills_the_running_answer_with_cancelled_results() -> None:
    c = Conversation("s")
    c.stage("q")
    c.begin_reply()
    c.finish_reply(tool_calls=(call("c1"), call("c2")))
    c.decided()
    answer = c.begin_tools()
    c.add_tool_result(ok("c1"))
    changed = c.cancel("stopped")
    assert changed == [answer] and answer.kind is MessageKind.CANCELLED_TOOL_USES
    assert answer.status is MessageStatus.COMPLETE and answer.tool_results[0] == ok("c1")
    assert answer.tool_results[1].text.startswith(CANCELLED_RESULT_TEXT)
    assert len(c.tree) == 3 and c.ready_for_input and c.running_tools is None


def test_interrupted_calls_are_found_at_the_leaf_only() -> None:
    c, answer_id = tool_round_interrupted("c1", "c2", finished=("c1",))
    found = c.interrupted_tools()
    assert found is not None and found.answer.id == answer_id and [x.id for x in found.calls] == ["c2"]
    c.stage("what happened?")
    c.cancel()
    assert c.interrupted_tools() is None  # a later turn was built on it: the request says interrupted


def test_rerun_runs_the_missing_calls_in_the_interrupted_answer() -> None:
    c, answer_id = tool_round_interrupted("c1", "c2", finished=("c1",))
    answer = c.rerun_tools()
    assert answer.id == answer_id and answer.status is MessageStatus.STREAMING
    assert c.state is TurnState.RUNNING_TOOLS and c.running_tools is answer
    assert [x.id for x in c.pending_tool_calls()] == ["c1", "c2"]
    c.add_tool_result(ok("c2", "again", "deploy"))
    done = c.record_tool_results(answer.tool_results)
    assert done is answer and answer.status is MessageStatus.COMPLETE
    assert [r.text for r in answer.tool_results] == ["done c1", "again"]
    assert c.state is TurnState.STREAMING and len(c.tree) == 3
    c.begin_reply()
    c.append_text("Deployed.")
    c.finish_reply()
    assert c.ready_for_input and c.interrupted_tools() is None


def test_skip_answers_the_missing_calls_as_interrupted() -> None:
    c, answer_id = tool_round_interrupted("c1", "c2", finished=("c2",))
    answer = c.skip_tools()
    assert answer.id == answer_id and answer.status is MessageStatus.INTERRUPTED
    assert [(r.call_id, r.text) for r in answer.tool_results] == [
        ("c1", INTERRUPTED_RESULT_TEXT),
        ("c2", "done c2"),
    ]
    assert c.interrupted_tools() is None and c.ready_for_input
    with pytest.raises(TreeError):
        c.rerun_tools()
