"""A conversation: its tree, the state of its one turn, and the steps of a turn.

This is the pure heart of a live session. Each step returns the messages it
added or changed, so the engine can write exactly those to the store the moment
they happen (durability is not deferred to the commit, docs/design.md §1). It does
no I/O and knows nothing of providers; the engine drives it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from threadline.core.compare import Compare, CompareTarget
from threadline.core.messages import (
    RECORD_KINDS,
    TOOL_ANSWER_KINDS,
    ContextFile,
    ImageBlock,
    Marker,
    MarkerType,
    Message,
    MessageKind,
    MessageStatus,
    RequestMetadata,
    ToolCall,
    ToolResult,
    interrupted_result,
    new_id,
    utcnow,
)
from threadline.core.tree import TANGENT_CHECKPOINT, ConversationTree, TreeError
from threadline.core.turn import Turn, TurnAction, TurnState

MAX_CHECKPOINT_NAME = 60
"""Characters of a checkpoint name: a label for a menu and a flag, not a note."""


def checkpoint_name(name: str) -> str:
    """``name`` trimmed, inner runs of white space made one; refused when empty or too long."""
    name = " ".join(name.split())
    if not name:
        raise TreeError("A checkpoint needs a name.")
    if len(name) > MAX_CHECKPOINT_NAME:
        raise TreeError(f"A checkpoint name can have at most {MAX_CHECKPOINT_NAME} characters.")
    if name == TANGENT_CHECKPOINT:
        raise TreeError(f"“{name}” is reserved; pick another name.")
    return name


@dataclass(frozen=True, slots=True)
class InterruptedTools:
    """Tool calls Threadline stopped while they ran (found after a crash at the active leaf).

    ``answer`` is the round's stored answer, left ``interrupted`` with the results
    of the calls that finished; ``calls`` are those without a result.
    """

    calls_message: Message
    answer: Message
    calls: tuple[ToolCall, ...]


class Conversation:
    """One session's history and turn. Exactly one exists per session id (engine registry)."""

    def __init__(self, session_id: str, tree: ConversationTree | None = None) -> None:
        self.session_id = session_id
        # ``tree or …`` would replace an empty tree (its ``len`` is 0) with a new one,
        # so the caller's tree and the conversation's would silently differ.
        self.tree = tree if tree is not None else ConversationTree()
        self.turn = Turn()
        self._reply_id: str | None = None
        self._tools_id: str | None = None
        self.compare: Compare | None = None
        """The running compare (several workers on one prompt), while the turn is ``COMPARING``."""

    # -- queries ------------------------------------------------------------------

    @property
    def state(self) -> TurnState:
        return self.turn.state

    @property
    def ready_for_input(self) -> bool:
        return self.turn.ready_for_input

    @property
    def staged(self) -> str | None:
        return self.turn.staged

    @property
    def reply(self) -> Message | None:
        """The assistant message of the running turn's current round."""
        return self.tree.get(self._reply_id) if self._reply_id else None

    @property
    def running_tools(self) -> Message | None:
        """The answer of the current tool round while its tools run (stored ``streaming``)."""
        return self.tree.get(self._tools_id) if self._tools_id else None

    def path(self) -> list[Message]:
        return self.tree.path()

    def markers_on_path(self) -> list[Message]:
        """The path's markers (agent changes, clears, tangents), in order, without its other messages."""
        return self.tree.path_of_kinds((MessageKind.MARKER,))

    def path_ids(self) -> list[str]:
        """The ids of ``path()``: cheaper, as no packed message is made (``core/packed_history.py``)."""
        return self.tree.path_ids()

    def interrupted_tools(self) -> InterruptedTools | None:
        """The calls at the active leaf a crash stopped while they ran, if any (and if ready)."""
        leaf_id = self.tree.active_leaf
        if not self.ready_for_input or leaf_id is None:
            return None
        answer = self.tree.get(leaf_id)
        if answer.kind not in TOOL_ANSWER_KINDS or answer.status is not MessageStatus.INTERRUPTED:
            return None
        if answer.parent_id is None or self.tree.children(answer.id):
            return None  # only a leaf grows in place; later turns already tell the model
        calls_message = self.tree.get(answer.parent_id)
        done = {r.call_id for r in answer.tool_results}
        missing = tuple(c for c in calls_message.tool_calls if c.id not in done)
        return InterruptedTools(calls_message, answer, missing) if missing else None

    def pending_tool_calls(self) -> tuple[ToolCall, ...]:
        """Calls of the current round still waiting for approval or a result."""
        reply = self.reply
        if reply is None or self.state not in (TurnState.AWAITING_APPROVAL, TurnState.RUNNING_TOOLS):
            return ()
        return reply.tool_calls

    # -- starting a turn ------------------------------------------------------------

    def stage(
        self,
        text: str,
        *,
        images: tuple[ImageBlock, ...] = (),
        context: tuple[ContextFile, ...] = (),
        parent_id: str | None = None,
        use_parent: bool = False,
    ) -> Message:
        """Add the prompt under the active leaf (or ``parent_id``) and start the turn."""
        self._require_ready()
        parent = parent_id if use_parent else self.tree.active_leaf
        prompt = Message.prompt(text, parent_id=parent, images=images, context=context)
        self.tree.add(prompt)
        self.turn.apply(TurnAction.STAGE, staged=prompt.id)
        return prompt

    def edit(
        self,
        message_id: str,
        text: str,
        *,
        images: tuple[ImageBlock, ...] | None = None,
        context: tuple[ContextFile, ...] | None = None,
    ) -> Message:
        """Stage an edited copy of a prompt as its sibling (a new version).

        Attachments are kept from the original unless new ones are given.
        """
        original = self.tree.get(message_id)
        if original.kind is not MessageKind.PROMPT:
            raise TreeError("only prompts can be edited")
        return self.stage(
            text,
            images=original.images if images is None else images,
            context=original.context if context is None else context,
            parent_id=original.parent_id,
            use_parent=True,
        )

    def regenerate(self, reply_id: str) -> Message:
        """Start a turn that answers the same user message again, as a new sibling reply."""
        reply = self.tree.get(reply_id)
        if not reply.is_assistant or reply.parent_id is None:
            raise TreeError("only replies can be regenerated")
        return self.answer(reply.parent_id)

    def answer(self, message_id: str) -> Message:
        """Start a turn that answers an existing user message (retry after a failure, regenerate).

        A compaction summary can be answered too: automatic compaction puts it between
        a prompt and its reply, so regenerating that reply answers the summary. So can a
        marker: a retry after switching agent asks the new agent, below the switch.
        """
        self._require_ready()
        message = self.tree.get(message_id)
        if not (message.is_user or message.kind in RECORD_KINDS):
            raise TreeError("only a user message can be answered")
        self.tree.set_active_leaf(message.id)
        self.turn.apply(TurnAction.STAGE, staged=message.id)
        return message

    def resume(self, reply_id: str) -> Message:
        """Continue an interrupted or cancelled reply; returns the reply that grows.

        Only a leaf grows in place. A reply that later turns were built on (it has
        children) is never rewritten, or those turns would follow text they never
        saw: a copy of it becomes a new version (its newest sibling) and the copy
        grows, while the original and everything under it stay, one "‹ n/m ›" away.
        """
        self._require_ready()
        reply = self.tree.get(reply_id)
        if reply.status not in (MessageStatus.INTERRUPTED, MessageStatus.CANCELLED) or reply.tool_calls:
            raise TreeError("only a partial reply without tool calls can be continued")
        assert reply.parent_id is not None
        if self.tree.children(reply.id):
            reply = self.tree.add(
                reply.copy(id=new_id(), created_at=utcnow(), metadata=_restarted(reply.metadata))
            )
        else:
            self.tree.set_active_leaf(reply.id)
        self.turn.apply(TurnAction.STAGE, staged=reply.parent_id)
        reply.status = MessageStatus.STREAMING
        self._reply_id = reply.id
        return reply

    def rerun_tools(self) -> Message:
        """Run the calls a crash interrupted again: a turn that starts in its tool round.

        The interrupted answer is the leaf, so it grows in place: it is ``streaming``
        (running) again, keeps the results of the calls that had finished, and gets
        the new ones through ``add_tool_result``/``record_tool_results``; the reply
        then streams as after any tool round. The person's click is the approval.
        """
        found = self._interrupted()
        assert found.calls_message.parent_id is not None
        self.turn.apply(TurnAction.STAGE, staged=found.calls_message.parent_id)
        self.turn.apply(TurnAction.TOOL_CALLS)
        self.turn.apply(TurnAction.DECIDED)
        found.answer.status = MessageStatus.STREAMING
        self._reply_id = found.calls_message.id
        self._tools_id = found.answer.id
        return found.answer

    def skip_tools(self) -> Message:
        """Leave the interrupted calls unrun: their answer records "interrupted" for each.

        The status stays ``interrupted`` (that is what happened); the model is told
        the same words whenever the conversation continues.
        """
        found = self._interrupted()
        answer = found.answer
        done = {r.call_id: r for r in answer.tool_results}
        answer.tool_results = tuple(
            done.get(c.id) or interrupted_result(c) for c in found.calls_message.tool_calls
        )
        answer.kind = MessageKind.CANCELLED_TOOL_USES
        return answer

    # -- several workers on one prompt (core/compare.py) ------------------------------

    def start_compare(
        self,
        text: str,
        targets: tuple[CompareTarget, ...],
        *,
        images: tuple[ImageBlock, ...] = (),
        context: tuple[ContextFile, ...] = (),
    ) -> Message:
        """Add the prompt under the active leaf and start one lane per target (2–4) on it."""
        self._require_ready()
        prompt = Message.prompt(text, parent_id=self.tree.active_leaf, images=images, context=context)
        self.tree.add(prompt)
        try:
            self.compare = Compare(prompt, targets, self.tree)
        except TreeError:
            self.tree.remove_leaf(prompt.id)
            raise
        self.turn.apply(TurnAction.START_COMPARE, staged=prompt.id)
        return prompt

    def worker_ended(self, index: int) -> bool:
        """A worker's lane has ended; once every worker has, the turn ends. Returns whether it did."""
        compare = self._require_compare()
        if compare.worker(index).lane.turn.busy:
            raise TreeError(f"worker {index} is still running")
        self.turn.apply(TurnAction.WORKER_ENDED)
        if not compare.all_ended:
            return False
        self._end_compare(TurnAction.COMPARE_DONE, compare.default_leaf())
        return True

    def pick(self, index: int) -> list[Message]:
        """Continue with worker ``index``'s reply: it becomes the active path, the turn ends.

        Workers still running are stopped (their partial replies kept, ``cancelled``);
        returns the messages that changed that way. The picked worker must have ended.
        """
        compare = self._require_compare()
        chosen = compare.worker(index)
        if chosen.lane.turn.busy:
            raise TreeError("That reply is still being written; wait for it or stop it first.")
        changed = [m for w in compare.workers if w.lane.turn.busy for m in w.lane.cancel()]
        self._end_compare(TurnAction.PICK, chosen.leaf)
        return changed

    def _end_compare(self, action: TurnAction, leaf: str | None) -> None:
        self.compare = None
        self.tree.set_active_leaf(leaf)
        self.turn.apply(action)

    def _stop_compare(
        self, stop: Callable[[Conversation], list[Message]], action: TurnAction
    ) -> list[Message]:
        compare = self._require_compare()
        changed = [m for w in compare.workers if w.lane.turn.busy for m in stop(w.lane)]
        self._end_compare(action, compare.default_leaf())
        return changed

    def _require_compare(self) -> Compare:
        if self.compare is None or self.state is not TurnState.COMPARING:
            raise TreeError("no compare is running")
        return self.compare

    # -- streaming -----------------------------------------------------------------

    def begin_reply(self, metadata: RequestMetadata | None = None) -> Message:
        """Add the streaming assistant message of this round under the active leaf."""
        if self.state is not TurnState.STREAMING:
            raise TreeError(f"cannot begin a reply while {self.state.value}")
        if self._reply_id is not None:
            # A second reply would hang under the first, leaving it ``streaming`` forever.
            raise TreeError("a reply of this round has already begun")
        meta = metadata or RequestMetadata(started_at=utcnow())
        reply = Message.reply(parent_id=self.tree.active_leaf, metadata=meta)
        self.tree.add(reply)
        self._reply_id = reply.id
        return reply

    def append_text(self, delta: str) -> Message:
        reply = self._current_reply(MessageStatus.STREAMING)
        reply.text += delta
        return reply

    def finish_reply(
        self, *, tool_calls: tuple[ToolCall, ...] = (), metadata: RequestMetadata | None = None
    ) -> Message:
        """The stream ended well: commit the turn, or move to approval for tool calls."""
        reply = self._current_reply(MessageStatus.STREAMING)
        reply.status = MessageStatus.COMPLETE
        reply.metadata = self._ended(reply, metadata)
        if tool_calls:
            reply.tool_calls = tool_calls
            reply.kind = MessageKind.TOOL_CALLS
            self.turn.apply(TurnAction.TOOL_CALLS)
        else:
            self.turn.apply(TurnAction.COMMIT)
            self._reply_id = None
        return reply

    # -- tool rounds ------------------------------------------------------------------

    def decided(self) -> None:
        """Every pending call has been allowed or refused; allowed ones run now."""
        self.turn.apply(TurnAction.DECIDED)

    def begin_tools(self) -> Message:
        """Add the round's answer, ``streaming`` (running), before any allowed tool starts.

        Stored before the tools run, it is what a restart finds: a round still
        ``streaming`` whose writer is gone becomes ``interrupted``, so the person
        and the model are told the truth (not "cancelled by the user").
        """
        if self.state is not TurnState.RUNNING_TOOLS:
            raise TreeError(f"cannot run tools while {self.state.value}")
        if self._tools_id is not None:
            raise TreeError("the tools of this round have already begun")
        answer = Message.tool_results_message((), parent_id=self.tree.active_leaf)
        answer.status = MessageStatus.STREAMING
        self.tree.add(answer)
        self._tools_id = answer.id
        return answer

    def add_tool_result(self, result: ToolResult) -> Message:
        """One call of the running round finished: its result joins the round's answer."""
        answer = self.running_tools
        if answer is None:
            raise TreeError("no tool round is running")
        answer.tool_results = (*answer.tool_results, result)
        return answer

    def record_tool_results(self, results: tuple[ToolResult, ...], *, refused_reason: str = "") -> Message:
        """Store one message answering every call of the round and continue streaming.

        Calls without a result in ``results`` were refused: they get cancelled results
        carrying ``refused_reason``, so the model sees the refusal (docs/design.md §1).
        """
        if self.state is not TurnState.RUNNING_TOOLS:
            raise TreeError(f"cannot record tool results while {self.state.value}")
        calls = self.pending_tool_calls()
        answered = {r.call_id for r in results}
        parent = self._reply_id
        if all(c.id in answered for c in calls):
            by_id = {r.call_id: r for r in results}
            message = Message.tool_results_message(tuple(by_id[c.id] for c in calls), parent_id=parent)
        else:
            message = Message.cancelled_tool_uses(
                calls, parent_id=parent, reason=refused_reason, completed=results
            )
        message = self._answer_round(message)
        self.turn.apply(TurnAction.TOOLS_DONE)
        self._reply_id = None
        return message

    # -- ending a turn early -------------------------------------------------------------

    def cancel(self, reason: str = "", *, completed: tuple[ToolResult, ...] = ()) -> list[Message]:
        """Stop the turn; keep the partial reply and answer pending calls as cancelled.

        ``completed`` holds results of calls of the round that had already run when
        the user stopped: the model is told what really happened, not "cancelled".
        """
        if not self.turn.busy:
            return []
        if self.compare is not None:  # Stop stops every worker
            return self._stop_compare(lambda lane: lane.cancel(reason), TurnAction.CANCEL)
        changed: list[Message] = []
        reply = self.reply
        pending = self.pending_tool_calls()
        if reply is not None and reply.status is MessageStatus.STREAMING:
            reply.status = MessageStatus.CANCELLED
            reply.metadata = self._ended(reply, None, stop_reason="cancelled")
            changed.append(reply)
        if pending:
            changed.append(self._answer_round(self._cancelled_answer(pending, reason, completed)))
        self.turn.apply(TurnAction.CANCEL)
        self._reply_id = self._tools_id = None
        return changed

    def fail(self, error: str, *, completed: tuple[ToolResult, ...] = ()) -> list[Message]:
        """The turn failed: the reply keeps its text with status ``failed``; the prompt stays.

        ``completed``: results of calls that ran before the failure (see ``cancel``).
        """
        if not self.turn.busy:
            return []
        if self.compare is not None:
            return self._stop_compare(lambda lane: lane.fail(error), TurnAction.FAIL)
        changed: list[Message] = []
        reply = self.reply
        pending = self.pending_tool_calls()
        if reply is not None and reply.status is MessageStatus.STREAMING:
            reply.status = MessageStatus.FAILED
            reply.metadata = self._ended(reply, None, error=error)
            changed.append(reply)
        if pending:
            changed.append(self._answer_round(self._cancelled_answer(pending, error, completed)))
        self.turn.apply(TurnAction.FAIL)
        self._reply_id = self._tools_id = None
        return changed

    # -- moving around --------------------------------------------------------------------

    def switch_version(self, message_id: str, offset: int) -> str:
        """Show another version of a message; moving out of the open tangent leaves it."""
        self._require_ready()
        tangent = self.open_tangent_marker()
        leaf = self.tree.switch_version(message_id, offset)
        self._leave_tangent_if_outside(tangent)
        return leaf

    def set_active_leaf(self, message_id: str | None) -> None:
        """Show the path to ``message_id`` (the branch map, a search hit); moving out of the
        open tangent leaves it."""
        self._require_ready()
        tangent = self.open_tangent_marker()
        self.tree.set_active_leaf(message_id)
        self._leave_tangent_if_outside(tangent)

    def _leave_tangent_if_outside(self, tangent: str | None) -> None:
        """The tangent ends when the shown path no longer runs through its marker.

        However the person got there (a restore, a version switch, the branch map), they
        chose to be elsewhere: the tab must not go on saying "in a tangent", and a later
        Return must not jump back to a main line they have already left. The tangent
        itself stays in the tree, as after Return.
        """
        if tangent is not None and tangent not in set(self.path_ids()):
            del self.tree.checkpoints[TANGENT_CHECKPOINT]

    def add_marker(self, marker: Marker) -> Message:
        """Record a change (an agent switch) under the active leaf, between turns.

        The marker becomes the active leaf, so the next prompt is its child: what
        comes after the divider in the view is what the change applies to.
        """
        self._require_ready()
        return self.tree.add(Message.marker_message(marker, parent_id=self.tree.active_leaf))

    # -- conversation controls (docs/conversation-controls.md) ------------------------------

    def clear_context(self) -> Message:
        """``/clear``: a marker after which later requests start; nothing is deleted."""
        return self.add_marker(Marker(MarkerType.CLEAR, "Context cleared"))

    def start_tangent(self, from_message_id: str | None = None) -> Message:
        """Start a side conversation below ``from_message_id`` (the active leaf by default).

        The active leaf is remembered as the place to return to, so the main line goes
        on where it was left, however far back the tangent branched off. A tangent
        inside a tangent is refused: there would be two places to return to.
        """
        self._require_ready()
        origin = self.tree.active_leaf
        if self.tree.in_tangent:
            raise TreeError("This chat is already in a tangent; return to the main line first.")
        if origin is None:
            raise TreeError("An empty chat has no main line to step aside from.")
        parent = from_message_id or origin
        self._require_message(parent)
        marker = Message.marker_message(Marker(MarkerType.TANGENT, "Tangent"), parent_id=parent)
        self.tree.checkpoints[TANGENT_CHECKPOINT] = origin
        return self.tree.add(marker)

    def end_tangent(self, *, bring_last_exchange: bool = False) -> list[Message]:
        """Return to the main line where it was left; the tangent stays in the tree.

        With ``bring_last_exchange`` the tangent's last prompt and its final reply are
        copied under the main line's leaf, so the main line sees what the tangent found.
        The copies carry their text only (no images, files or tool calls: the main line
        did not see those steps) and ``metadata.brought_from`` names the original.
        Returns those copies (``[]`` without them).
        """
        self._require_ready()
        if not self.tree.in_tangent:
            raise TreeError("This chat is not in a tangent.")
        exchange = _last_exchange(self.path()) if bring_last_exchange else None
        origin = self.tree.end_tangent()
        if exchange is None:
            return []
        prompt, reply = exchange
        copy = Message.prompt(prompt.text, parent_id=origin)
        copy.metadata = RequestMetadata(brought_from=prompt.id)
        answer = Message.reply(
            parent_id=copy.id,
            text=reply.text,
            status=MessageStatus.COMPLETE,
            metadata=replace(reply.metadata or RequestMetadata(), brought_from=reply.id),
        )
        self.tree.add(copy)
        self.tree.add(answer)
        return [copy, answer]

    def set_checkpoint(self, name: str, message_id: str | None = None) -> str:
        """Name a point of the conversation (the active leaf by default).

        Names are trimmed (inner runs of spaces made one) so "draft" and " draft " are
        the same name. A name already in use moves to the new point, as a tag set again
        does: it is the way to say "the draft is now here", the dialog and ``/checkpoint``
        say so, and nothing is lost (the old point's messages stay in the tree).
        """
        name = checkpoint_name(name)
        if message_id is not None:
            self._require_message(message_id)
        elif self.tree.active_leaf is None:
            raise TreeError("An empty chat has nothing to mark: send a message first.")
        return self.tree.set_checkpoint(name, message_id)

    def restore_checkpoint(self, name: str) -> str:
        """Show the path that ends at the checkpoint's message; nothing is deleted.

        The checkpoint's message becomes the active leaf, so the next prompt starts a
        new branch there. Restoring to a point outside the open tangent leaves the
        tangent (without going back to its origin): the person chose where to be.
        """
        self._require_ready()
        name = " ".join(name.split())
        if name not in self.tree.named_checkpoints:
            raise TreeError(f"There is no checkpoint called “{name}”.")
        tangent = self.open_tangent_marker()
        target = self.tree.restore_checkpoint(name)
        self._leave_tangent_if_outside(tangent)
        return target

    def remove_checkpoint(self, name: str) -> None:
        """Forget a checkpoint's name; its message stays."""
        name = " ".join(name.split())
        if name not in self.tree.named_checkpoints:
            raise TreeError(f"There is no checkpoint called “{name}”.")
        del self.tree.checkpoints[name]

    def open_tangent_marker(self) -> str | None:
        """The id of the open tangent's marker: the latest tangent marker on the path."""
        if not self.tree.in_tangent:
            return None
        for message in reversed(self.path()):
            if message.marker is not None and message.marker.type is MarkerType.TANGENT:
                return message.id
        return None

    def _require_message(self, message_id: str) -> None:
        if message_id not in self.tree:
            raise TreeError("That message is no longer in this chat.")

    def add_summary(self, text: str, summarised_through: str) -> Message:
        """Append a compaction summary under the active leaf.

        Allowed between turns, and inside a streaming turn before its reply began:
        that is where automatic compaction lands after a context overflow, so the
        retried request already carries the summary.
        """
        mid_turn = self.state is TurnState.STREAMING and self._reply_id is None
        if not (self.ready_for_input or mid_turn):
            raise TreeError(f"cannot add a summary while {self.state.value}")
        summary = Message.summary(
            text, parent_id=self.tree.active_leaf, summarised_through=summarised_through
        )
        self.tree.add(summary)
        return summary

    # -- internals -------------------------------------------------------------------------

    def _cancelled_answer(
        self, pending: tuple[ToolCall, ...], reason: str, completed: tuple[ToolResult, ...]
    ) -> Message:
        """Cancelled results for ``pending``, keeping every result that had come in."""
        arrived = self.running_tools.tool_results if self.running_tools else ()
        known = {r.call_id for r in completed}
        ran = completed + tuple(r for r in arrived if r.call_id not in known)
        return Message.cancelled_tool_uses(pending, parent_id=self._reply_id, reason=reason, completed=ran)

    def _answer_round(self, message: Message) -> Message:
        """Store ``message`` as the round's answer: filling the running one in place, or added.

        The running answer is the leaf, so it may grow; it keeps its id, parent and time.
        """
        running = self.running_tools
        self._tools_id = None
        if running is None:
            return self.tree.add(message)
        running.kind = message.kind
        running.text = message.text
        running.tool_results = message.tool_results
        running.status = message.status
        return running

    def _interrupted(self) -> InterruptedTools:
        self._require_ready()
        found = self.interrupted_tools()
        if found is None:
            raise TreeError("no tool calls were interrupted here")
        return found

    def _require_ready(self) -> None:
        if not self.ready_for_input:
            raise TreeError(f"the session is busy ({self.state.value})")

    def _current_reply(self, status: MessageStatus) -> Message:
        reply = self.reply
        if reply is None or reply.status is not status:
            raise TreeError("no reply is streaming")
        return reply

    @staticmethod
    def _ended(
        reply: Message, metadata: RequestMetadata | None, *, stop_reason: str = "", error: str = ""
    ) -> RequestMetadata:
        base = metadata or reply.metadata or RequestMetadata()
        changes: dict[str, object] = {"ended_at": base.ended_at or utcnow()}
        if stop_reason and not base.stop_reason:
            changes["stop_reason"] = stop_reason
        if error:
            changes["error"] = error
        return replace(base, **changes)  # type: ignore[arg-type]


def _last_exchange(path: list[Message]) -> tuple[Message, Message] | None:
    """The tangent's last prompt and the final reply to it, if it has one with text."""
    starts = [i for i, m in enumerate(path) if m.marker is not None and m.marker.type is MarkerType.TANGENT]
    if not starts:
        return None
    side = path[starts[-1] + 1 :]
    prompts = [i for i, m in enumerate(side) if m.is_prompt]
    if not prompts:
        return None
    prompt = side[prompts[-1]]
    replies = [m for m in side[prompts[-1] + 1 :] if m.is_assistant and m.text.strip()]
    return (prompt, replies[-1]) if replies else None


def _restarted(metadata: RequestMetadata | None) -> RequestMetadata | None:
    """A continued copy's metadata: the same target, a new start, no ending yet."""
    if metadata is None:
        return None
    return replace(metadata, started_at=utcnow(), ended_at=None, stop_reason="", error="")
