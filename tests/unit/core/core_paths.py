"""Small builders for conversation paths used by the core tests.

A ``PathBuilder`` appends messages one under the other, so a test reads like the
conversation it describes: ``p.prompt("hi").reply("hello").prompt("again")``.
"""

from __future__ import annotations

from threadline.core.messages import Message, MessageStatus, ToolCall, ToolResult


def call(call_id: str, name: str = "read_file", arguments: str = "{}") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def ok(call_id: str, text: str = "ok", tool_name: str = "read_file") -> ToolResult:
    return ToolResult(call_id=call_id, text=text, tool_name=tool_name)


def err(call_id: str, text: str = "boom", tool_name: str = "read_file") -> ToolResult:
    return ToolResult(call_id=call_id, text=text, is_error=True, tool_name=tool_name)


class PathBuilder:
    """Builds a root-to-leaf path; every message is the child of the previous one."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    @property
    def last(self) -> Message:
        return self.messages[-1]

    def _parent(self) -> str | None:
        return self.messages[-1].id if self.messages else None

    def _add(self, message: Message) -> PathBuilder:
        self.messages.append(message)
        return self

    def prompt(self, text: str, **kw: object) -> PathBuilder:
        return self._add(Message.prompt(text, parent_id=self._parent(), **kw))  # type: ignore[arg-type]

    def reply(
        self,
        text: str = "",
        *calls: ToolCall,
        status: MessageStatus = MessageStatus.COMPLETE,
    ) -> PathBuilder:
        return self._add(Message.reply(parent_id=self._parent(), text=text, tool_calls=calls, status=status))

    def results(self, *results: ToolResult) -> PathBuilder:
        return self._add(Message.tool_results_message(results, parent_id=self._parent()))

    def cancelled(
        self, *calls: ToolCall, reason: str = "", completed: tuple[ToolResult, ...] = ()
    ) -> PathBuilder:
        return self._add(
            Message.cancelled_tool_uses(calls, parent_id=self._parent(), reason=reason, completed=completed)
        )

    def summary(self, text: str, through: str) -> PathBuilder:
        return self._add(Message.summary(text, parent_id=self._parent(), summarised_through=through))

    def id_of(self, index: int) -> str:
        return self.messages[index].id

    def build(self) -> list[Message]:
        return list(self.messages)
