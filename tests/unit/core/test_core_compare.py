"""A compare's workers read their state from their lanes (core/compare.py)."""

from __future__ import annotations

from threadline.core.compare import CompareTarget, WorkerState
from threadline.core.conversation import Conversation
from threadline.core.messages import ToolCall, ToolResult
from threadline.core.turn import TurnState

TWO = (CompareTarget("p", "first"), CompareTarget("p", "second"))


def test_a_worker_stopped_before_its_first_token_is_stopped_not_done() -> None:
    """Column 1 stopped before it wrote anything, column 2 finished: column 1 reads
    "Stopped", and the chat ends on column 2's reply, not on the bare prompt."""
    conversation = Conversation("s")
    prompt = conversation.start_compare("Which is better?", TWO)
    compare = conversation.compare
    assert compare is not None
    early, finished = compare.workers

    early.lane.cancel()
    assert early.leaf == prompt.id and early.reply_id is None
    assert early.state is WorkerState.CANCELLED and early.state.label == "Stopped"
    assert not conversation.worker_ended(early.index)

    finished.lane.begin_reply()
    finished.lane.append_text("This one.")
    finished.lane.finish_reply()
    assert finished.state is WorkerState.DONE
    assert compare.default_leaf() == finished.leaf
    assert conversation.worker_ended(finished.index)
    assert conversation.state is TurnState.IDLE
    assert conversation.tree.active_leaf == finished.reply_id


def test_with_no_reply_anywhere_the_chat_ends_at_the_prompt() -> None:
    conversation = Conversation("s")
    prompt = conversation.start_compare("Anyone?", TWO)
    conversation.cancel()
    assert conversation.ready_for_input and conversation.tree.active_leaf == prompt.id


def test_a_stopped_partial_reply_is_shown_when_none_finished() -> None:
    conversation = Conversation("s")
    conversation.start_compare("Go", TWO)
    compare = conversation.compare
    assert compare is not None
    silent, partial = compare.workers
    partial.lane.begin_reply()
    partial.lane.append_text("Half")
    conversation.cancel()
    assert silent.state is WorkerState.CANCELLED and partial.state is WorkerState.CANCELLED
    assert conversation.tree.active_leaf == partial.reply_id


def test_a_worker_stopped_between_its_tool_round_and_the_next_reply_is_stopped() -> None:
    conversation = Conversation("s")
    conversation.start_compare("Look it up", TWO)
    compare = conversation.compare
    assert compare is not None
    tooling, other = compare.workers
    lane = tooling.lane
    lane.begin_reply()
    lane.finish_reply(tool_calls=(ToolCall("call_1", "lookup", "{}"),))
    lane.decided()
    lane.begin_tools()
    results = lane.record_tool_results((ToolResult("call_1", "found", tool_name="lookup"),))
    assert tooling.state is WorkerState.STREAMING and tooling.leaf == results.id
    lane.cancel()
    assert tooling.state is WorkerState.CANCELLED  # its leaf is the round's results, no reply yet
    other.lane.cancel()
    assert other.state is WorkerState.CANCELLED
