"""A conversation: its tree, the state of its one turn, and the steps of a turn.

This is the pure heart of a live session. Each step returns the messages it
added or changed, so the engine can write exactly those to the store the moment
they happen (durability is not deferred to the commit, DESIGN.md §1). It does
no I/O and knows nothing of providers; the engine drives it.
"""

from __future__ import annotations

from dataclasses import replace

from threadline.core.messages import (
    ContextFile,
    ImageBlock,
    Message,
    MessageKind,
    MessageStatus,
    RequestMetadata,
    ToolCall,
    ToolResult,
    utcnow,
)
from threadline.core.tree import ConversationTree, TreeError
from threadline.core.turn import Turn, TurnAction, TurnState


class Conversation:
    """One session's history and turn. Exactly one exists per session id (engine registry)."""

    def __init__(self, session_id: str, tree: ConversationTree | None = None) -> None:
        self.session_id = session_id
        # ``tree or …`` would replace an empty tree (its ``len`` is 0) with a new one,
        # so the caller's tree and the conversation's would silently differ.
        self.tree = tree if tree is not None else ConversationTree()
        self.turn = Turn()
        self._reply_id: str | None = None

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

    def path(self) -> list[Message]:
        return self.tree.path()

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
        a prompt and its reply, so regenerating that reply answers the summary.
        """
        self._require_ready()
        message = self.tree.get(message_id)
        if not (message.is_user or message.kind is MessageKind.SUMMARY):
            raise TreeError("only a user message can be answered")
        self.tree.set_active_leaf(message.id)
        self.turn.apply(TurnAction.STAGE, staged=message.id)
        return message

    def resume(self, reply_id: str) -> Message:
        """Continue an interrupted or cancelled reply in place: its text keeps growing."""
        self._require_ready()
        reply = self.tree.get(reply_id)
        if reply.status not in (MessageStatus.INTERRUPTED, MessageStatus.CANCELLED) or reply.tool_calls:
            raise TreeError("only a partial reply without tool calls can be continued")
        assert reply.parent_id is not None
        self.tree.set_active_leaf(reply.id)
        self.turn.apply(TurnAction.STAGE, staged=reply.parent_id)
        reply.status = MessageStatus.STREAMING
        self._reply_id = reply.id
        return reply

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

    def record_tool_results(self, results: tuple[ToolResult, ...], *, refused_reason: str = "") -> Message:
        """Store one message answering every call of the round and continue streaming.

        Calls without a result in ``results`` were refused: they get cancelled results
        carrying ``refused_reason``, so the model sees the refusal (DESIGN.md §1).
        """
        if self.state is not TurnState.RUNNING_TOOLS:
            raise TreeError(f"cannot record tool results while {self.state.value}")
        calls = self.pending_tool_calls()
        answered = {r.call_id for r in results}
        if all(c.id in answered for c in calls):
            by_id = {r.call_id: r for r in results}
            message = Message.tool_results_message(
                tuple(by_id[c.id] for c in calls), parent_id=self.tree.active_leaf
            )
        else:
            message = Message.cancelled_tool_uses(
                calls, parent_id=self.tree.active_leaf, reason=refused_reason, completed=results
            )
        self.tree.add(message)
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
        changed: list[Message] = []
        reply = self.reply
        pending = self.pending_tool_calls()
        if reply is not None and reply.status is MessageStatus.STREAMING:
            reply.status = MessageStatus.CANCELLED
            reply.metadata = self._ended(reply, None, stop_reason="cancelled")
            changed.append(reply)
        if pending:
            message = Message.cancelled_tool_uses(
                pending, parent_id=self.tree.active_leaf, reason=reason, completed=completed
            )
            self.tree.add(message)
            changed.append(message)
        self.turn.apply(TurnAction.CANCEL)
        self._reply_id = None
        return changed

    def fail(self, error: str, *, completed: tuple[ToolResult, ...] = ()) -> list[Message]:
        """The turn failed: the reply keeps its text with status ``failed``; the prompt stays.

        ``completed``: results of calls that ran before the failure (see ``cancel``).
        """
        if not self.turn.busy:
            return []
        changed: list[Message] = []
        reply = self.reply
        pending = self.pending_tool_calls()
        if reply is not None and reply.status is MessageStatus.STREAMING:
            reply.status = MessageStatus.FAILED
            reply.metadata = self._ended(reply, None, error=error)
            changed.append(reply)
        if pending:
            message = Message.cancelled_tool_uses(
                pending, parent_id=self.tree.active_leaf, reason=error, completed=completed
            )
            self.tree.add(message)
            changed.append(message)
        self.turn.apply(TurnAction.FAIL)
        self._reply_id = None
        return changed

    # -- moving around --------------------------------------------------------------------

    def switch_version(self, message_id: str, offset: int) -> str:
        self._require_ready()
        return self.tree.switch_version(message_id, offset)

    def set_active_leaf(self, message_id: str | None) -> None:
        self._require_ready()
        self.tree.set_active_leaf(message_id)

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
