"""A minimal live conversation over a real core ``Conversation``, for pure widget tests.

It is a test double only for the observer side of ``LiveConversationApi``: the
history is the real core tree, and each helper performs the same core step the
engine would, then emits the event the engine would emit. Flows that involve
providers and the store use the real Engine (tests/ui/test_flows_*.py).
"""

from __future__ import annotations

from collections.abc import Callable

from threadline.core.conversation import Conversation
from threadline.core.messages import Message, RequestMetadata, ToolCall
from threadline.core.session import SessionInfo
from threadline.engine.events import (
    ActivePathChanged,
    ConversationEvent,
    MessageAdded,
    MessageChanged,
    TextDelta,
    TurnStateChanged,
)


class FakeLive:
    def __init__(self, session_id: str = "s1", conversation: Conversation | None = None) -> None:
        self.session_id = session_id
        self.conversation = conversation or Conversation(session_id)
        self.info = SessionInfo(id=session_id, title="Test")
        self._subs: list[Callable[[ConversationEvent], None]] = []

    def subscribe(self, callback: Callable[[ConversationEvent], None]) -> Callable[[], None]:
        self._subs.append(callback)
        return lambda: self._subs.remove(callback)

    def emit(self, event: ConversationEvent) -> None:
        for cb in list(self._subs):
            cb(event)

    # -- engine-like steps ----------------------------------------------------------

    def user_says(self, text: str) -> Message:
        prompt = self.conversation.stage(text)
        self.emit(MessageAdded(self.session_id, prompt))
        self.emit(TurnStateChanged(self.session_id, self.conversation.state))
        return prompt

    def begin(self, model: str = "test-model", provider: str = "p") -> Message:
        reply = self.conversation.begin_reply(RequestMetadata(provider=provider, model=model))
        self.emit(MessageAdded(self.session_id, reply))
        return reply

    def delta(self, text: str) -> None:
        reply = self.conversation.append_text(text)
        self.emit(TextDelta(self.session_id, reply.id, text))

    def finish(self, tool_calls: tuple[ToolCall, ...] = ()) -> Message:
        reply = self.conversation.finish_reply(tool_calls=tool_calls)
        self.emit(MessageChanged(self.session_id, reply))
        self.emit(TurnStateChanged(self.session_id, self.conversation.state))
        return reply

    def cancel(self) -> None:
        for m in self.conversation.cancel():
            self.emit(MessageChanged(self.session_id, m))
        self.emit(TurnStateChanged(self.session_id, self.conversation.state))

    def fail(self, error: str) -> None:
        for m in self.conversation.fail(error):
            self.emit(MessageChanged(self.session_id, m))
        self.emit(TurnStateChanged(self.session_id, self.conversation.state))

    def exchange(self, prompt: str, reply: str) -> tuple[Message, Message]:
        p = self.user_says(prompt)
        self.begin()
        self.delta(reply)
        return p, self.finish()

    def switch_version(self, message_id: str, offset: int) -> None:
        leaf = self.conversation.switch_version(message_id, offset)
        self.emit(ActivePathChanged(self.session_id, leaf))
