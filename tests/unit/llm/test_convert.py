"""Request conversion details not covered over HTTP."""

from __future__ import annotations

from threadline.core.messages import ContextFile, Role, ToolCall, ToolResult
from threadline.core.request import BuiltRequest, SentMessage
from threadline.llm.convert import anthropic_messages, context_file_text, openai_messages


def request(*messages: SentMessage, system: str = "") -> BuiltRequest:
    return BuiltRequest(system=system, messages=messages, estimated_tokens=1)


def test_context_file_names_cannot_break_the_tag() -> None:
    assert context_file_text(ContextFile('a"b.txt', "x")) == '<file name="a\'b.txt">\nx\n</file>'


def test_no_system_message_when_system_is_empty() -> None:
    assert openai_messages(request(SentMessage(Role.USER, text="hi"))) == [{"role": "user", "content": "hi"}]


def test_results_only_user_message_has_no_empty_openai_user_message() -> None:
    calls = (ToolCall("c1", "f", ""),)
    out = openai_messages(
        request(
            SentMessage(Role.USER, text="go"),
            SentMessage(Role.ASSISTANT, tool_calls=calls),
            SentMessage(Role.USER, tool_results=(ToolResult("c1", text=""),)),
        )
    )
    assert out[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    assert out[2] == {"role": "tool", "tool_call_id": "c1", "content": "(no output)"}
    assert len(out) == 3


def test_anthropic_never_sends_empty_text_blocks() -> None:
    calls = (ToolCall("c1", "f", "not json"),)
    out = anthropic_messages(
        request(
            SentMessage(Role.USER, text="go"),
            SentMessage(Role.ASSISTANT, text="", tool_calls=calls),
            SentMessage(Role.USER, tool_results=(ToolResult("c1", text="", is_error=True),)),
        )
    )
    assert out[1]["content"] == [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}]
    assert out[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": [], "is_error": True}
    ]
