"""Hypothesis stateful tests of a conversation's turns (docs/design.md §1 and §7).

Random sequences of send, stream, tool calls, approve, deny, cancel, fail, edit,
regenerate, resume, retry, switch version / active leaf, compaction summaries and
"crash and reopen". After every step:

* whatever request would be sent now is well-formed (``check_well_formed``), fits
  the limits, and ``NothingFitsError`` only comes when even the last turn cannot fit;
* no user text is lost: every prompt ever staged is still in the tree, unchanged;
* a session ready for input has nothing staged;
* history is never rewritten: no operation changes the text or content of a
  message that has children (continuing, editing or retrying one makes a new
  version), and the stored variant never updates such a message in SQLite.

``ConversationMachine`` crashes in process (the tree is deep-copied with
``streaming`` turned ``interrupted``, the turn starts fresh); ``StoredConversationMachine``
writes every step to a real SQLite ``Store`` as the engine does, and its crash closes
the store mid-turn, reopens it and reloads the tree.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from threadline.core.compaction import NothingToCompactError, plan_compaction
from threadline.core.compare import CompareTarget, CompareWorker, WorkerState
from threadline.core.conversation import Conversation
from threadline.core.messages import (
    PARTIAL_STATUSES,
    Marker,
    MarkerType,
    Message,
    MessageKind,
    MessageStatus,
    ToolCall,
    ToolResult,
)
from threadline.core.request import (
    CONTINUE_PROMPT,
    BuiltRequest,
    Limits,
    NothingFitsError,
    build_request,
    check_well_formed,
)
from threadline.core.tree import TANGENT_CHECKPOINT, ConversationTree, TreeError
from threadline.core.turn import TurnState

TEXT = st.text(alphabet="abcdefgh xyz.\n", min_size=1, max_size=60)
LONG_TEXT = st.one_of(TEXT, st.text(alphabet="lmnop ", min_size=100, max_size=400))
TOOL_NAMES = ["read_file", "Grep", "fs/read_file", "removed_server/tool", "write_note"]
KNOWN_TOOLS = frozenset({"read_file", "grep", "write_note"})

# Passing runs take seconds; a failing one shrinks for minutes, and a readable minimal
# example is worth more than the suite-wide 120 s timeout.
pytestmark = pytest.mark.timeout(900)

RULES_RUN: Counter[str] = Counter()
"""How often each rule ran in this process (checked by ``test_every_rule_runs``)."""


def counted(function: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(function)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        RULES_RUN[function.__name__] += 1
        function(self, *args, **kwargs)

    return wrapper


SETTINGS = settings(
    max_examples=200,
    stateful_step_count=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


class ConversationMachine(RuleBasedStateMachine):
    """One session driven through random turns; crashes rebuild it from its tree."""

    def __init__(self) -> None:
        super().__init__()
        self.conversation = Conversation("session")
        self.limits = Limits()
        self.system = ""
        self.staged_prompts: dict[str, str] = {}
        """Every prompt ever staged: id → text. None may ever be lost or changed."""
        self.counter = 0
        self.resumed: str | None = None
        """The id of the reply being continued by ``resume``, while that turn runs."""
        self.parents: dict[str, tuple[Any, ...]] = {}
        """Every message seen with children: id → its content then. It may never change."""

    # -- setup ---------------------------------------------------------------------------------

    @initialize(
        cap=st.sampled_from([400, 400, 2, 3, 5, 8]),
        budget=st.sampled_from([None, None, 40, 90, 250]),
        system=st.sampled_from(["", "", "Be brief."]),
    )
    def setup(self, cap: int, budget: int | None, system: str) -> None:
        self.limits = Limits(history_cap=cap, token_budget=budget)
        self.system = system

    # -- hooks the stored variant overrides --------------------------------------------------------

    def persist(self) -> None:
        """Write what changed (the in-memory machine has nothing to write)."""

    def crash_and_reopen(self) -> ConversationTree:
        tree = copy.deepcopy(self.conversation.tree)
        for message in tree:
            if message.status is MessageStatus.STREAMING:
                message.status = MessageStatus.INTERRUPTED
        return tree

    # -- helpers ----------------------------------------------------------------------------------

    @property
    def c(self) -> Conversation:
        return self.conversation

    def next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def streaming_reply(self) -> Message | None:
        reply = self.c.reply
        return reply if reply is not None and reply.status is MessageStatus.STREAMING else None

    def prompts_on_path(self) -> list[Message]:
        return [m for m in self.c.path() if m.kind is MessageKind.PROMPT]

    def partial_replies(self) -> list[Message]:
        return [
            m for m in self.c.tree if m.is_assistant and m.status in PARTIAL_STATUSES and not m.tool_calls
        ]

    def earlier_partial_replies(self) -> list[Message]:
        """Partial replies that later turns were built on (they have children)."""
        return [m for m in self.partial_replies() if self.c.tree.children(m.id)]

    def record_prompt(self, prompt: Message) -> None:
        assert prompt.id not in self.staged_prompts
        self.staged_prompts[prompt.id] = prompt.text

    # -- rules: starting a turn ------------------------------------------------------------------

    @precondition(lambda self: self.c.ready_for_input)
    @rule(text=LONG_TEXT)
    @counted
    def send(self, text: str) -> None:
        self.record_prompt(self.c.stage(text))
        self.resumed = None
        self.persist()

    @precondition(lambda self: self.c.ready_for_input)
    @rule(name=st.sampled_from(["Reviewer", "Default"]), _a=st.just(0), _b=st.just(0))
    @counted
    def switch_agent(self, name: str, _a: int, _b: int) -> None:
        """A marker between turns: the next prompt hangs under it, and it is never sent."""
        marker = self.c.add_marker(Marker(MarkerType.AGENT, name, settings={"name": name}))
        assert self.c.tree.active_leaf == marker.id and self.c.ready_for_input
        self.persist()

    @precondition(lambda self: self.c.ready_for_input and self.prompts_on_path())
    @rule(data=st.data(), text=TEXT)
    @counted
    def edit_previous_prompt(self, data: st.DataObject, text: str) -> None:
        original = data.draw(st.sampled_from(self.prompts_on_path()))
        before = original.text
        edited = self.c.edit(original.id, text)
        assert edited.parent_id == original.parent_id and original.text == before
        assert self.c.tree.version(edited.id).index == self.c.tree.version(edited.id).count
        self.record_prompt(edited)
        self.resumed = None
        self.persist()

    @precondition(lambda self: self.c.ready_for_input and any(m.is_assistant for m in self.c.path()))
    @rule(data=st.data())
    @counted
    def regenerate(self, data: st.DataObject) -> None:
        reply = data.draw(st.sampled_from([m for m in self.c.path() if m.is_assistant]))
        siblings = len(self.c.tree.siblings(reply.id))
        self.c.regenerate(reply.id)
        assert self.c.tree.active_leaf == reply.parent_id
        self.resumed = None
        self.persist()
        # The new reply is a sibling of the old one once it begins.
        self.c.begin_reply()
        assert len(self.c.tree.siblings(reply.id)) == siblings + 1
        self.persist()

    @precondition(lambda self: self.c.ready_for_input and bool(self.partial_replies()))
    @rule(data=st.data())
    @counted
    def resume_partial_reply(self, data: st.DataObject) -> None:
        reply = data.draw(st.sampled_from(self.partial_replies()))
        text = reply.text
        # What is sent to continue it: the partial text, then the continue prompt.
        self.c.set_active_leaf(reply.id)
        request = self.request(continue_reply=True)
        if request is not None and text:
            assert request.messages[-1].text == CONTINUE_PROMPT
            assert request.messages[-2].text == text
        self.do_resume(reply)

    def do_resume(self, reply: Message) -> None:
        text, status, had_children = reply.text, reply.status, bool(self.c.tree.children(reply.id))
        versions = len(self.c.tree.siblings(reply.id))
        grows = self.c.resume(reply.id)
        assert grows.status is MessageStatus.STREAMING and grows.text == text
        if had_children:  # a new version grows; the original stays as it was
            assert grows.id != reply.id and grows.parent_id == reply.parent_id
            assert reply.status is status and len(self.c.tree.siblings(reply.id)) == versions + 1
            assert self.c.tree.active_leaf == grows.id
        else:
            assert grows is reply
        self.resumed = grows.id
        self.persist()

    @precondition(lambda self: self.c.ready_for_input and bool(self.earlier_partial_replies()))
    @rule(data=st.data())
    @counted
    def resume_earlier_reply(self, data: st.DataObject) -> None:
        """Continue a stopped reply that later turns were built on: it must become a new version."""
        self.do_resume(data.draw(st.sampled_from(self.earlier_partial_replies())))

    @precondition(
        lambda self: (
            self.c.ready_for_input
            and self.c.tree.active_leaf is not None
            and self.c.tree.get(self.c.tree.active_leaf).is_user
        )
    )
    @rule()
    @counted
    def retry(self) -> None:
        """Answer the user message at the leaf again (after a failure or a crash)."""
        leaf = self.c.tree.active_leaf
        assert leaf is not None
        self.c.answer(leaf)
        self.resumed = None
        self.persist()

    # -- rules: streaming --------------------------------------------------------------------

    @precondition(lambda self: self.c.state is TurnState.STREAMING)
    @rule(text=TEXT)
    @counted
    def stream_text(self, text: str) -> None:
        if self.c.reply is None:
            self.c.begin_reply()
            self.persist()
        self.c.append_text(text)
        self.persist()

    @precondition(lambda self: self.streaming_reply() is not None)
    @rule()
    @counted
    def finish_plain(self) -> None:
        self.c.finish_reply()
        assert self.c.state is TurnState.IDLE
        self.resumed = None
        self.persist()

    @precondition(lambda self: self.streaming_reply() is not None)
    @rule(names=st.lists(st.sampled_from(TOOL_NAMES), min_size=1, max_size=3))
    @counted
    def finish_with_tool_calls(self, names: list[str]) -> None:
        self.do_finish_with_tool_calls(names)

    def do_finish_with_tool_calls(self, names: list[str]) -> None:
        calls = tuple(ToolCall(self.next_id("call"), name, '{"n": 1}') for name in names)
        self.c.finish_reply(tool_calls=calls)
        assert self.c.state is TurnState.AWAITING_APPROVAL
        assert self.c.pending_tool_calls() == calls
        self.resumed = None
        self.persist()

    # -- rules: tool rounds -------------------------------------------------------------------

    @precondition(lambda self: self.c.state is TurnState.AWAITING_APPROVAL)
    @rule(errors=st.lists(st.booleans(), min_size=3, max_size=3))
    @counted
    def approve(self, errors: list[bool]) -> None:
        self.do_approve(errors)

    def do_approve(self, errors: list[bool]) -> None:
        calls = self.c.pending_tool_calls()
        self.do_start_tools(len(calls))
        answer = self.c.running_tools
        assert answer is not None
        results = tuple(
            ToolResult(call.id, f'{{"value": "{call.id}"}}', is_error=error, tool_name=call.name)
            for call, error in zip(calls, errors, strict=False)
        )
        message = self.c.record_tool_results(results)
        assert message is answer  # filled in place: it is the leaf
        assert message.kind is MessageKind.TOOL_RESULTS
        assert [r.call_id for r in message.tool_results] == [c.id for c in calls]
        assert self.c.state is TurnState.STREAMING
        self.persist()

    def do_start_tools(self, finished: int) -> None:
        """Allow every call; the round's answer is added running, ``finished`` calls return."""
        calls = self.c.pending_tool_calls()
        self.c.decided()
        answer = self.c.begin_tools()
        assert answer.status is MessageStatus.STREAMING and self.c.tree.active_leaf == answer.id
        self.persist()
        for call in calls[:finished]:
            self.c.add_tool_result(ToolResult(call.id, "ran", tool_name=call.name))
            self.persist()

    @precondition(lambda self: self.c.state is TurnState.RUNNING_TOOLS)
    @rule()
    @counted
    def finish_tools(self) -> None:
        answer = self.c.running_tools
        assert answer is not None
        done = {r.call_id: r for r in answer.tool_results}
        results = tuple(
            done.get(c.id) or ToolResult(c.id, "late", tool_name=c.name) for c in self.c.pending_tool_calls()
        )
        assert self.c.record_tool_results(results) is answer
        assert answer.status is MessageStatus.COMPLETE and self.c.state is TurnState.STREAMING
        self.persist()

    # One rule for both answers to an interrupted round: its precondition is rare, and two
    # rules sharing it split its few chances so unevenly that one of them may never run.
    @precondition(lambda self: self.c.interrupted_tools() is not None)
    @rule(skip=st.booleans())
    @counted
    def settle_interrupted_tools(self, skip: bool) -> None:
        if skip:
            self.skip_interrupted_tools()
        else:
            self.rerun_interrupted_tools()

    def rerun_interrupted_tools(self) -> None:
        RULES_RUN["rerun_interrupted_tools"] += 1
        found = self.c.interrupted_tools()
        assert found is not None
        answer = self.c.rerun_tools()
        assert answer is found.answer and self.c.state is TurnState.RUNNING_TOOLS
        self.persist()

    def skip_interrupted_tools(self) -> None:
        RULES_RUN["skip_interrupted_tools"] += 1
        found = self.c.interrupted_tools()
        assert found is not None
        answer = self.c.skip_tools()
        assert answer.status is MessageStatus.INTERRUPTED
        assert {r.call_id for r in answer.tool_results} == {c.id for c in found.calls_message.tool_calls}
        assert self.c.interrupted_tools() is None
        self.persist()

    @precondition(lambda self: self.c.state is TurnState.AWAITING_APPROVAL)
    @rule(reason=st.sampled_from(["", "not that file"]), allow_first=st.booleans())
    @counted
    def deny(self, reason: str, allow_first: bool) -> None:
        self.do_deny(reason, allow_first)

    def do_deny(self, reason: str, allow_first: bool) -> None:
        calls = self.c.pending_tool_calls()
        self.c.decided()
        self.persist()
        ran = (ToolResult(calls[0].id, "done", tool_name=calls[0].name),) if allow_first else ()
        message = self.c.record_tool_results(ran, refused_reason=reason)
        if allow_first and len(calls) == 1:
            assert message.kind is MessageKind.TOOL_RESULTS
        else:
            assert message.kind is MessageKind.CANCELLED_TOOL_USES
            assert message.text == reason
        assert {r.call_id for r in message.tool_results} == {c.id for c in calls}
        self.persist()

    @precondition(lambda self: self.c.state is TurnState.STREAMING)
    @rule(
        names=st.lists(st.sampled_from(TOOL_NAMES), min_size=1, max_size=3),
        decision=st.sampled_from(
            [
                "approve",
                "deny",
                "approve with errors",
                "left running",
                "crash mid-tool",
                "crash, then rerun",
                "crash, then skip",
            ]
        ),
        finished=st.integers(0, 2),
    )
    @counted
    def full_tool_round(self, names: list[str], decision: str, finished: int) -> None:
        """Stream, ask for tools and have them approved or denied, in one step.

        "left running": the tools start (``finished`` of them return) and the next step
        may be a crash, a stop or a failure while they run, or their end.
        """
        if self.c.reply is None:
            self.c.begin_reply()
        self.persist()
        self.do_finish_with_tool_calls(names)
        if decision == "left running":
            self.do_start_tools(finished)
        elif decision.startswith("crash"):
            self.do_start_tools(finished)
            self.do_crash()
            found = self.c.interrupted_tools()
            if finished < len(names):  # some call was still running
                assert found is not None and found.answer.status is MessageStatus.INTERRUPTED
            if found is not None and decision.endswith("rerun"):
                self.rerun_interrupted_tools()
            elif found is not None and decision.endswith("skip"):
                self.skip_interrupted_tools()
        elif decision == "deny":
            self.do_deny("no", False)
        else:
            self.do_approve([decision.endswith("errors")] * 3)

    # -- rules: ending early ------------------------------------------------------------------

    @precondition(lambda self: self.c.turn.busy)
    @rule(reason=st.sampled_from(["", "stop"]))
    @counted
    def cancel(self, reason: str) -> None:
        reply = self.streaming_reply()
        text = reply.text if reply else ""
        pending = self.c.pending_tool_calls()
        changed = self.c.cancel(reason)
        if reply is not None:
            assert reply.status is MessageStatus.CANCELLED and reply.text == text
        if pending:
            assert changed[-1].kind is MessageKind.CANCELLED_TOOL_USES
        assert self.c.state is TurnState.IDLE
        self.resumed = None
        self.persist()

    @precondition(lambda self: self.c.turn.busy)
    @rule(partial=st.sampled_from(["", "half an answer"]))
    @counted
    def fail(self, partial: str) -> None:
        reply = self.streaming_reply()
        if reply is not None and partial:
            self.c.append_text(partial)
            self.persist()
        text = reply.text if reply else ""
        self.c.fail("provider went away")
        if reply is not None:
            assert reply.status is MessageStatus.FAILED and reply.text == text
        assert self.c.state is TurnState.FAILED
        self.resumed = None
        self.persist()

    # -- rules: moving around ---------------------------------------------------------------------

    @precondition(
        lambda self: (
            self.c.ready_for_input and any(len(self.c.tree.siblings(m.id)) > 1 for m in self.c.path())
        )
    )
    @rule(data=st.data(), offset=st.sampled_from([-1, 1, 2]))
    @counted
    def switch_version(self, data: st.DataObject, offset: int) -> None:
        candidates = [m for m in self.c.path() if len(self.c.tree.siblings(m.id)) > 1]
        message = data.draw(st.sampled_from(candidates))
        ids = [m.id for m in self.c.tree.siblings(message.id)]
        target = ids[(ids.index(message.id) + offset) % len(ids)]
        tangent = self.c.open_tangent_marker()
        leaf = self.c.switch_version(message.id, offset)
        assert target in [m.id for m in self.c.path()]
        assert not self.c.tree.children(leaf)
        self.check_left_tangent(tangent)
        self.persist()

    @precondition(lambda self: self.c.ready_for_input and len(self.c.tree) > 0)
    @rule(data=st.data())
    @counted
    def switch_active_leaf(self, data: st.DataObject) -> None:
        target = data.draw(st.sampled_from([m.id for m in self.c.tree]))
        tangent = self.c.open_tangent_marker()
        self.c.set_active_leaf(target)
        assert self.c.path()[-1].id == target
        self.check_left_tangent(tangent)

    def check_left_tangent(self, tangent: str | None) -> None:
        """A move of the shown path (a version, the branch map) out of the open tangent leaves
        it; within it, the tangent stays open."""
        if tangent is not None:
            assert self.c.tree.in_tangent == (tangent in {m.id for m in self.c.path()})
        self.persist()

    @precondition(lambda self: self.c.ready_for_input and len(self.c.path()) >= 2)
    @rule(data=st.data())
    @counted
    def summarise_older_part(self, data: st.DataObject) -> None:
        path = self.c.path()
        through = data.draw(st.sampled_from(path[:-1]))
        summary = self.c.add_summary("Summary: " + through.text[:20], through.id)
        assert self.c.tree.active_leaf == summary.id
        self.persist()

    # -- rules: the conversation controls (compact, clear, tangents, checkpoints) ---------------

    # One rule draws which control to use: six always-enabled rules of their own would
    # crowd out the rare states (tools interrupted by a crash) the other rules must reach.
    @precondition(lambda self: self.c.ready_for_input and bool(self.c.path()))
    @rule(
        control=st.sampled_from(
            ["compact", "clear", "start_tangent", "end_tangent", "set_checkpoint", "restore_checkpoint"]
        ),
        data=st.data(),
    )
    @counted
    def use_control(self, control: str, data: st.DataObject) -> None:
        step: Callable[[st.DataObject], None] = getattr(self, f"do_{control}")
        RULES_RUN[control] += 1
        step(data)
        self.persist()

    def do_compact(self, data: st.DataObject) -> None:
        keep = data.draw(st.integers(0, 3), label="keep_turns")
        try:
            plan = plan_compaction(self.c.path(), keep_turns=keep)
        except NothingToCompactError:
            return
        summary = self.c.add_summary(f"Summary through {plan.summarised_through}", plan.summarised_through)
        assert self.c.tree.active_leaf == summary.id

    def do_clear(self, data: st.DataObject) -> None:
        marker = self.c.clear_context()
        assert self.c.tree.active_leaf == marker.id

    def do_start_tangent(self, data: st.DataObject) -> None:
        if self.c.tree.in_tangent:  # a tangent inside a tangent is refused, and changes nothing
            before = (len(self.c.tree), self.c.tree.active_leaf, dict(self.c.tree.checkpoints))
            with pytest.raises(TreeError, match="already in a tangent"):
                self.c.start_tangent()
            assert before == (len(self.c.tree), self.c.tree.active_leaf, dict(self.c.tree.checkpoints))
            return
        origin = self.c.tree.active_leaf
        at = data.draw(st.sampled_from([m.id for m in self.c.path()]), label="from")
        marker = self.c.start_tangent(at)
        assert marker.parent_id == at and self.c.tree.tangent_origin == origin
        assert self.c.tree.active_leaf == marker.id and self.c.open_tangent_marker() == marker.id
        assert TANGENT_CHECKPOINT not in self.c.tree.named_checkpoints

    def do_end_tangent(self, data: st.DataObject) -> None:
        if not self.c.tree.in_tangent:
            with pytest.raises(TreeError, match="not in a tangent"):
                self.c.end_tangent()
            return
        bring = data.draw(st.booleans(), label="bring_last_exchange")
        origin = self.c.tree.tangent_origin
        before = len(self.c.tree)
        brought = self.c.end_tangent(bring_last_exchange=bring)
        assert self.c.tree.tangent_origin is None
        assert len(self.c.tree) == before + len(brought)  # the tangent stays in the tree
        if brought:
            prompt, reply = brought
            assert prompt.parent_id == origin and self.c.tree.active_leaf == reply.id
            for copy in brought:
                assert copy.metadata is not None and copy.metadata.brought_from in self.c.tree
                assert copy.text == self.c.tree.get(copy.metadata.brought_from).text
            self.record_prompt(prompt)
        else:
            assert self.c.tree.active_leaf == origin

    def do_set_checkpoint(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(["start", "draft 2", "before tools"]), label="name")
        target = data.draw(st.sampled_from([m.id for m in self.c.path()]), label="at")
        if name in self.c.tree.named_checkpoints and data.draw(st.booleans(), label="remove"):
            self.c.remove_checkpoint(name)
            assert name not in self.c.tree.named_checkpoints
            return
        others = {n: t for n, t in self.c.tree.named_checkpoints.items() if n != name}
        self.c.set_checkpoint(f"  {name} ", target)  # names are trimmed; a name used again moves
        assert self.c.tree.named_checkpoints == {**others, name: target}

    def do_restore_checkpoint(self, data: st.DataObject) -> None:
        if not self.c.tree.named_checkpoints:
            with pytest.raises(TreeError, match="no checkpoint"):
                self.c.restore_checkpoint("nowhere")
            return
        name = data.draw(st.sampled_from(sorted(self.c.tree.named_checkpoints)), label="name")
        before = len(self.c.tree)
        tangent = self.c.open_tangent_marker()
        self.c.restore_checkpoint(name)
        assert self.c.tree.active_leaf == self.c.tree.named_checkpoints[name]
        assert len(self.c.tree) == before  # nothing deleted
        if tangent is not None:  # a restore out of the open tangent leaves it
            assert self.c.tree.in_tangent == (tangent in {m.id for m in self.c.path()})

    # Hypothesis falls back to the first enabled rule (fewest arguments, then by name)
    # when its random picks hit disabled ones; the unused arguments keep this always
    # enabled rule out of the front of that order, so it does not crowd out the rest.
    @precondition(lambda self: len(self.c.tree) > 0)
    @rule(_a=st.just(0), _b=st.just(0), _c=st.just(0))
    @counted
    def crash(self, _a: int, _b: int, _c: int) -> None:
        self.do_crash()

    def do_crash(self) -> None:
        streaming = {m.id: m.text for m in self.c.tree if m.status is MessageStatus.STREAMING}
        leaf = self.c.tree.active_leaf
        tree = self.crash_and_reopen()
        self.conversation = Conversation("session", tree)
        self.resumed = None
        assert self.c.ready_for_input and self.c.staged is None
        assert self.c.tree.active_leaf == leaf
        for message_id, text in streaming.items():
            message = self.c.tree.get(message_id)
            assert message.status is MessageStatus.INTERRUPTED
            assert message.text == text

    # -- invariants -------------------------------------------------------------------------

    @invariant()
    def no_user_text_is_lost(self) -> None:
        for prompt_id, text in self.staged_prompts.items():
            assert prompt_id in self.c.tree, "a staged prompt vanished"
            message = self.c.tree.get(prompt_id)
            assert message.kind is MessageKind.PROMPT and message.text == text

    @invariant()
    def no_message_with_children_changes(self) -> None:
        """History is never rewritten: once a message has children, its content stays."""
        for message in self.c.tree:
            if not self.c.tree.children(message.id):
                continue
            now = content_of(message)
            before = self.parents.setdefault(message.id, now)
            assert before == now, f"{message.kind.value} {message.id} changed after later turns used it"

    @invariant()
    def checkpoints_point_into_the_tree(self) -> None:
        for target in self.c.tree.checkpoints.values():
            assert target in self.c.tree, "a checkpoint (or the tangent's return point) lost its message"

    @invariant()
    def nothing_before_a_clear_is_sent(self) -> None:
        path = self.c.path()
        clears = [i for i, m in enumerate(path) if m.marker is not None and m.marker.type is MarkerType.CLEAR]
        if not clears or not self.c.ready_for_input:
            return
        before = {m.id for m in path[: clears[-1]]}
        try:
            built = build_request(path, known_tools=KNOWN_TOOLS)
        except (ValueError, NothingFitsError):
            return
        for message in built.messages:
            assert not before & set(message.source_ids), "a message before /clear was sent"

    @invariant()
    def ready_means_nothing_staged(self) -> None:
        if self.c.ready_for_input:
            assert self.c.staged is None
        else:
            assert self.c.staged is not None
            assert self.c.staged in {m.id for m in self.c.path()}

    @invariant()
    def what_would_be_sent_is_well_formed(self) -> None:
        if self.c.state is TurnState.STREAMING:
            # The request of this round (sent before its reply began), and the request
            # that continues a partial reply.
            self.request(continue_reply=False)
            self.request(continue_reply=True)
            if self.resumed is not None:
                resumed = self.c.tree.get(self.resumed)
                request = self.request(continue_reply=True)
                if request is not None and resumed.text:
                    assert request.messages[-2].text.endswith(resumed.text)
        elif self.c.ready_for_input and self.c.path():
            leaf = self.c.path()[-1]
            if leaf.is_user:
                self.request(continue_reply=False)  # a retry
            if leaf.is_assistant and leaf.status in PARTIAL_STATUSES:
                self.request(continue_reply=True)  # a continuation
            # The next prompt the person sends.
            nxt = Message.prompt("next question", parent_id=leaf.id)
            self.request(path=[*self.c.path(), nxt])

    def request(
        self, *, continue_reply: bool = False, path: list[Message] | None = None
    ) -> BuiltRequest | None:
        """Build what would be sent, check it, and return it (``None`` when nothing fits)."""
        path = self.c.path() if path is None else path
        kwargs: dict[str, Any] = {"system": self.system, "known_tools": KNOWN_TOOLS}
        try:
            unlimited = build_request(path, continue_reply=continue_reply, **kwargs)
        except ValueError as error:
            # Only a path with nothing sendable (e.g. everything summarised) has no request.
            assert "nothing to send" in str(error)
            return None
        assert check_well_formed(unlimited.messages) == [], unlimited.messages
        try:
            request = build_request(path, continue_reply=continue_reply, limits=self.limits, **kwargs)
        except NothingFitsError:
            self.assert_last_turn_cannot_fit(path, unlimited, continue_reply)
            return None
        assert check_well_formed(request.messages) == [], request.messages
        assert len(request.messages) <= self.limits.history_cap
        if self.limits.token_budget is not None:
            assert request.estimated_tokens <= self.limits.token_budget
        # What is sent is a suffix of the unlimited request, cut at a prompt.
        assert request.messages[-1].source_ids == unlimited.messages[-1].source_ids
        if request.dropped_messages:
            first = request.messages[0]
            assert first.is_prompt and first.tool_results == ()
        return request

    def assert_last_turn_cannot_fit(
        self, path: list[Message], unlimited: BuiltRequest, continue_reply: bool
    ) -> None:
        """``NothingFitsError`` is allowed only when the last turn alone does not fit.

        The last turn starts at the path message that opens the request's last prompt;
        built on its own (with the same system text), it must not fit either.
        """
        messages = list(unlimited.messages)
        last_prompt = [m for m in messages if m.is_prompt and m.source_ids][-1]
        ids = [m.id for m in path]
        start = ids.index(last_prompt.source_ids[0])
        turn = [m for m in path[start:] if m.kind is not MessageKind.SUMMARY]
        try:
            alone = build_request(
                turn,
                system=unlimited.system,
                known_tools=KNOWN_TOOLS,
                continue_reply=continue_reply,
                limits=self.limits,
            )
        except NothingFitsError:
            return
        raise AssertionError(f"NothingFitsError although the last turn fits alone: {alone}")


def content_of(message: Message) -> tuple[Any, ...]:
    """What a message says (and how it ended): none of it may change once it has children."""
    return (
        message.kind,
        message.status,
        message.text,
        message.images,
        message.context,
        message.tool_calls,
        message.tool_results,
        message.parent_id,
        message.marker,
    )


TestConversationMachine = ConversationMachine.TestCase
TestConversationMachine.settings = SETTINGS


class CompareMachine(ConversationMachine):
    """The same machine, where a prompt may also go to several workers at once (a compare).

    A subclass, so the rules above keep the steps their rare states need; every rule
    above runs here too, mixed with the compare's.
    """

    # -- rules: several workers on one prompt (core/compare.py) ----------------------------------

    def workers(self, *states: TurnState) -> list[CompareWorker]:
        """The running compare's workers whose lane is in one of ``states`` (any, if none given)."""
        compare = self.c.compare
        if compare is None:
            return []
        return [w for w in compare.workers if not states or w.lane.state in states]

    def end_worker(self, worker: CompareWorker) -> None:
        """The engine's step when a worker's run returns: the turn ends with the last one."""
        assert worker.state.ended
        workers = self.workers()
        others_running = any(not w.state.ended for w in workers if w is not worker)
        ended = self.c.worker_ended(worker.index)
        assert ended is not others_running
        if ended:
            assert self.c.ready_for_input and self.c.compare is None and self.c.staged is None
            self.check_default_leaf(workers)

    def check_default_leaf(self, workers: list[CompareWorker]) -> None:
        """Nobody picked: the chat shows the first finished reply, never a bare prompt that
        hides one (a worker stopped before its first token is not "finished")."""
        done = [w for w in workers if w.state is WorkerState.DONE]
        if done:
            assert self.c.tree.active_leaf == done[0].leaf
            assert self.c.tree.get(done[0].leaf).kind is not MessageKind.PROMPT
        else:  # the first column that wrote anything, else the prompt
            wrote = [w for w in workers if w.messages()]
            assert not wrote or self.c.tree.active_leaf == wrote[0].leaf

    # Not while a crash left tools interrupted: that state is rare and its own rule needs it.
    @precondition(lambda self: self.c.ready_for_input and self.c.interrupted_tools() is None)
    @rule(text=TEXT, count=st.integers(2, 4))
    @counted
    def start_compare(self, text: str, count: int) -> None:
        leaf = self.c.tree.active_leaf
        prompt = self.c.start_compare(text, tuple(CompareTarget("p", f"m{i}") for i in range(count)))
        self.record_prompt(prompt)
        self.resumed = None
        assert prompt.parent_id == leaf and self.c.state is TurnState.COMPARING
        assert self.c.staged == prompt.id and not self.c.ready_for_input
        assert [w.state for w in self.workers()] == [WorkerState.STREAMING] * count
        self.persist()

    # The workers' steps are one rule drawing which step to take (as ``use_control`` does):
    # five rules of their own would crowd out the rare states the older rules must reach.
    @precondition(lambda self: self.c.compare is not None)
    @rule(data=st.data(), step=st.sampled_from(["delta", "finish", "tools", "end"]))
    @counted
    def compare_step(self, data: st.DataObject, step: str) -> None:
        streaming = bool(self.workers(TurnState.STREAMING))
        waiting = bool(self.workers(TurnState.AWAITING_APPROVAL))
        # A waiting worker's tool round is the rarest state to reach (a finish with tools
        # first, no crash or Stop between): "finish" goes to it too while one waits.
        if waiting and (step in ("tools", "finish") or (step == "delta" and not streaming)):
            self.compare_tools(data, data.draw(st.booleans(), label="allow"))
        elif step == "end" or not streaming:
            self.compare_end_worker(data, data.draw(st.sampled_from(["fail", "stop"]), label="how"))
        elif step == "finish":
            self.compare_finish(data, data.draw(st.booleans(), label="tools"))
        else:
            self.compare_delta(data, data.draw(TEXT, label="text"))

    def compare_delta(self, data: st.DataObject, text: str) -> None:
        RULES_RUN["compare_delta"] += 1
        lane = data.draw(st.sampled_from(self.workers(TurnState.STREAMING))).lane
        if lane.reply is None:
            reply = lane.begin_reply()
            assert reply.parent_id in {self.c.staged, *(m.id for m in lane.path())}
            self.persist()
        lane.append_text(text)
        assert self.c.tree.get(lane.reply.id).text.endswith(text)  # type: ignore[union-attr]
        self.persist()

    def compare_finish(self, data: st.DataObject, tools: bool) -> None:
        RULES_RUN["compare_finish"] += 1
        worker = data.draw(st.sampled_from(self.workers(TurnState.STREAMING)))
        if worker.lane.reply is None:
            worker.lane.begin_reply()
        calls = (ToolCall(self.next_id("call"), "read_file", "{}"),) if tools else ()
        worker.lane.finish_reply(tool_calls=calls)
        self.persist()
        if tools:
            assert worker.state is WorkerState.AWAITING_APPROVAL
            assert self.c.state is TurnState.COMPARING
            if data.draw(st.booleans(), label="decided at once"):  # as a person who is watching
                self.compare_tools(data, data.draw(st.booleans(), label="allow"))
        else:
            assert worker.state is WorkerState.DONE
            self.end_worker(worker)
            self.persist()

    def compare_tools(self, data: st.DataObject, allow: bool) -> None:
        """One worker's tool round: its own approval and results, the others untouched."""
        RULES_RUN["compare_tools"] += 1
        worker = data.draw(st.sampled_from(self.workers(TurnState.AWAITING_APPROVAL)))
        others = {w.index: w.state for w in self.workers() if w is not worker}
        lane = worker.lane
        calls = lane.pending_tool_calls()
        lane.decided()
        lane.begin_tools()
        assert worker.state is WorkerState.RUNNING_TOOLS
        self.persist()
        results = tuple(ToolResult(c.id, "ran", tool_name=c.name) for c in calls) if allow else ()
        answer = lane.record_tool_results(results, refused_reason="" if allow else "no")
        assert {r.call_id for r in answer.tool_results} == {c.id for c in calls}
        assert worker.state is WorkerState.STREAMING
        assert {w.index: w.state for w in self.workers() if w is not worker} == others
        self.persist()

    def compare_end_worker(self, data: st.DataObject, how: str) -> None:
        """One worker fails (its provider) or is stopped (its own Stop); the others go on."""
        RULES_RUN["compare_end_worker"] += 1
        worker = data.draw(st.sampled_from([w for w in self.workers() if not w.state.ended]))
        reply = worker.lane.reply
        text = reply.text if reply is not None else ""
        if how == "fail":
            worker.lane.fail("provider went away")
            assert worker.state is WorkerState.FAILED
        else:
            worker.lane.cancel()
            # Stopped, even before its first token or between a tool round and the next reply.
            assert worker.state is WorkerState.CANCELLED
        if reply is not None:
            assert reply.text == text and reply.status is not MessageStatus.STREAMING
        self.persist()
        self.end_worker(worker)
        self.persist()

    @precondition(lambda self: any(w.state.ended for w in self.workers()))
    @rule(data=st.data())
    @counted
    def compare_pick(self, data: st.DataObject) -> None:
        """Continue with one reply: that branch becomes the path; the next request carries only it."""
        worker = data.draw(st.sampled_from([w for w in self.workers() if w.state.ended]))
        others = [w for w in self.workers() if w is not worker]
        mine = {m.id for m in worker.messages()}
        theirs = {m.id for w in others for m in w.messages()}
        running = [
            w.lane.reply
            for w in others
            if w.lane.reply is not None and w.lane.reply.status is MessageStatus.STREAMING
        ]
        self.c.pick(worker.index)
        assert self.c.ready_for_input and self.c.staged is None and self.c.compare is None
        assert self.c.tree.active_leaf == worker.leaf
        assert all(not w.lane.turn.busy for w in others)
        for reply in running:  # a worker still writing is stopped, its text kept
            assert reply.status is MessageStatus.CANCELLED
        path = {m.id for m in self.c.path()}
        assert mine <= path and not theirs & path
        nxt = Message.prompt("next question", parent_id=worker.leaf)
        request = self.request(path=[*self.c.path(), nxt])
        if request is not None:
            sent = {source for message in request.messages for source in message.source_ids}
            assert not sent & theirs, "a reply that was not picked was sent"
        self.persist()

    # Stop-all and crash share one rule (like the interrupted tools above): two rules with
    # this precondition would take so many turns that rarer states elsewhere go unreached.
    @precondition(lambda self: self.c.compare is not None)
    @rule(how=st.sampled_from(["stop", "crash"]), _a=st.just(0))
    @counted
    def compare_interrupt(self, how: str, _a: int) -> None:
        if how == "stop":
            self.compare_stop_all()
        else:
            self.compare_crash()

    def compare_stop_all(self) -> None:
        """Stop during a compare stops every worker; each keeps what it wrote."""
        RULES_RUN["compare_stop_all"] += 1
        workers = self.workers()
        running = [w for w in workers if not w.state.ended]
        replies = [(w.lane.reply, w.lane.reply.text) for w in workers if w.lane.reply is not None]
        streaming = [r for r, _ in replies if r is not None and r.status is MessageStatus.STREAMING]
        self.c.cancel("stop")
        assert self.c.ready_for_input and self.c.compare is None and self.c.staged is None
        assert all(w.state is WorkerState.CANCELLED for w in running)  # none of them "Done"
        self.check_default_leaf(workers)
        for reply, text in replies:
            assert reply is not None and reply.text == text
        assert all(r.status is MessageStatus.CANCELLED for r in streaming)
        self.persist()

    def compare_crash(self) -> None:
        """The process dies mid-compare: every worker's partial reply is kept, ``interrupted``."""
        RULES_RUN["compare_crash"] += 1
        compare = self.c.compare
        assert compare is not None
        partial = {
            m.id: m.text for w in compare.workers for m in w.messages() if m.status is MessageStatus.STREAMING
        }
        self.do_crash()
        assert self.c.compare is None and self.c.state is TurnState.IDLE
        for message_id, text in partial.items():
            message = self.c.tree.get(message_id)
            assert message.status is MessageStatus.INTERRUPTED and message.text == text

    @invariant()
    def a_compare_is_one_turn(self) -> None:
        """While workers run the session is busy with the one prompt; every lane sends well-formed."""
        compare = self.c.compare
        if compare is None:
            assert self.c.state is not TurnState.COMPARING
            return
        assert self.c.state is TurnState.COMPARING and self.c.staged == compare.prompt_id
        assert not compare.all_ended, "every worker ended but the session is still busy"
        for worker in compare.workers:
            mine = worker.messages()
            assert not mine or mine[0].parent_id == compare.prompt_id
            if worker.state is WorkerState.DONE:  # "Done" means a finished reply, never nothing
                assert mine and mine[-1].status is MessageStatus.COMPLETE
                assert mine[-1].kind in (MessageKind.RESPONSE, MessageKind.TOOL_CALLS)
            if worker.lane.turn.busy:
                assert worker.lane.staged == compare.prompt_id
            if worker.lane.state is TurnState.STREAMING:
                self.request(path=worker.lane.path())


TestCompareMachine = CompareMachine.TestCase
TestCompareMachine.settings = SETTINGS


# -- the same machine, persisted to a real SQLite store -----------------------------------------------


class StoredConversationMachine(ConversationMachine):
    """Every step is written to a SQLite ``Store``; a crash closes it mid-turn and reopens it."""

    def __init__(self) -> None:
        super().__init__()
        from threadline.store.repository import Store

        self.directory = Path(tempfile.mkdtemp(prefix="threadline-prop-"))
        self.url = Store.sqlite_url(self.directory / "threadline.db")
        self.loop = asyncio.new_event_loop()
        self.store = self.run(Store.open(self.url))
        self.session_id = self.run(self.store.create_session(title="prop")).id
        self.conversation = Conversation(self.session_id)
        self.written: dict[str, tuple[Any, ...]] = {}
        self.written_leaf: str | None = None
        self.written_checkpoints: dict[str, str] = {}

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def teardown(self) -> None:
        try:
            self.run(self.store.close())
        finally:
            self.loop.close()
            shutil.rmtree(self.directory, ignore_errors=True)

    @staticmethod
    def snapshot(message: Message) -> tuple[Any, ...]:
        return (message.kind, message.status, message.text, message.tool_calls, message.tool_results)

    def persist(self) -> None:
        """Write what changed since the last step, as the engine does after each step."""
        appended = False
        for message in self.c.tree:  # insertion order: parents first
            now = self.snapshot(message)
            before = self.written.get(message.id)
            if before is None:
                self.run(self.store.append_message(self.session_id, message))
                appended = True  # an append moves the stored leaf (a compare's worker: off the path)
            elif before != now:
                assert not self.c.tree.children(message.id), "an UPDATE of a message with children"
                if before[:2] == now[:2] and before[3:] == now[3:]:
                    self.run(self.store.update_message_text(message.id, message.text))
                else:
                    self.run(self.store.update_message(message))
            self.written[message.id] = now
        leaf = self.c.tree.active_leaf
        if leaf != self.written_leaf or appended:
            self.run(self.store.set_active_leaf(self.session_id, leaf))
            self.written_leaf = leaf
        if self.c.tree.checkpoints != self.written_checkpoints:
            self.run(self.store.update_session(self.session_id, checkpoints=dict(self.c.tree.checkpoints)))
            self.written_checkpoints = dict(self.c.tree.checkpoints)

    def crash_and_reopen(self) -> ConversationTree:
        from threadline.store.repository import Store

        # The process dies mid-turn: nothing commits the turn, the store just goes away.
        self.run(self.store.close())
        self.store = self.run(Store.open(self.url))
        tree = self.run(self.store.load_tree(self.session_id))
        stored = {m.id: m for m in tree}
        assert set(stored) == set(self.written), "a written message was not stored"
        for message_id, (kind, status, text, calls, results) in self.written.items():
            message = stored[message_id]
            assert message.kind is kind and message.text == text
            assert message.tool_calls == calls and message.tool_results == results
            expected = MessageStatus.INTERRUPTED if status is MessageStatus.STREAMING else status
            assert message.status is expected
        for prompt_id, text in self.staged_prompts.items():
            assert stored[prompt_id].text == text
        assert tree.checkpoints == self.written_checkpoints, "checkpoints or a tangent were not stored"
        self.written = {m.id: self.snapshot(m) for m in tree}
        self.written_leaf = tree.active_leaf
        return tree


TestStoredConversationMachine = StoredConversationMachine.TestCase
TestStoredConversationMachine.settings = settings(SETTINGS, max_examples=40, stateful_step_count=30)


class StoredCompareMachine(CompareMachine, StoredConversationMachine):
    """Compares written to a real SQLite store step by step, crashing mid-compare."""


TestStoredCompareMachine = StoredCompareMachine.TestCase
TestStoredCompareMachine.settings = settings(SETTINGS, max_examples=40, stateful_step_count=30)


def test_every_rule_runs() -> None:
    """The machine is not vacuous: every rule ran, many times, in the test above."""
    RULES_RUN.clear()
    TestConversationMachine("runTest").runTest()
    rules = {
        "send", "edit_previous_prompt", "regenerate", "resume_partial_reply", "retry", "stream_text",
        "finish_plain", "finish_with_tool_calls", "approve", "deny", "cancel", "fail", "switch_version",
        "switch_active_leaf", "summarise_older_part", "crash", "full_tool_round",
        "resume_earlier_reply", "finish_tools", "settle_interrupted_tools", "rerun_interrupted_tools",
        "skip_interrupted_tools", "switch_agent", "use_control", "compact", "clear", "start_tangent",
        "end_tangent", "set_checkpoint", "restore_checkpoint",
    }  # fmt: skip
    # Every rule must run; how often depends on Hypothesis' (derandomized) choices, which
    # shift whenever a precondition changes, so only the total is held to a high bar.
    assert {name for name, count in RULES_RUN.items() if count >= 1} == rules, RULES_RUN
    assert sum(RULES_RUN.values()) > 3000, RULES_RUN


def test_every_compare_rule_runs() -> None:
    """The compare machine reaches every step of a compare: workers' deltas, finishes with and
    without tools, their own tool rounds, failures and stops, a pick, Stop for all, a crash."""
    rules = {
        "start_compare", "compare_step", "compare_delta", "compare_finish", "compare_tools",
        "compare_end_worker", "compare_pick", "compare_interrupt", "compare_stop_all", "compare_crash",
    }  # fmt: skip
    # A rule that needs several steps before it applies (a worker's own tool round) can be
    # missed by one run's choices, which shift with the whole suite's order (seen once in CI):
    # a run with more examples follows before the test says a rule is unreachable.
    original = TestCompareMachine.settings
    try:
        for examples in (SETTINGS.max_examples, 2 * SETTINGS.max_examples, 4 * SETTINGS.max_examples):
            RULES_RUN.clear()
            # The retries draw afresh (not derandomized): the same seed would mostly repeat
            # the choices that missed.
            TestCompareMachine.settings = settings(
                SETTINGS, max_examples=examples, derandomize=examples == SETTINGS.max_examples
            )
            TestCompareMachine("runTest").runTest()
            if rules <= {name for name, count in RULES_RUN.items() if count >= 1}:
                break
    finally:
        TestCompareMachine.settings = original
    assert rules <= {name for name, count in RULES_RUN.items() if count >= 1}, RULES_RUN
