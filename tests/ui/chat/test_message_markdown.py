"""One message as Markdown: text as it is, tool calls and results fenced, fences never broken."""

from __future__ import annotations

from threadline.core.messages import ImageBlock, Message, MessageKind, Role, ToolCall, ToolResult
from threadline.ui.chat.view.message_markdown import fenced, message_markdown


def test_a_reply_with_a_tool_call_gets_its_arguments_as_pretty_json() -> None:
    message = Message(
        id="r1",
        parent_id="p1",
        role=Role.ASSISTANT,
        kind=MessageKind.TOOL_CALLS,
        text="Let me look.",
        tool_calls=(ToolCall("c1", "time__now", '{"zone":"UTC"}'),),
    )
    assert message_markdown(message, lambda name: name.replace("__", "/")) == (
        'Let me look.\n\n**Tool call** `time/now`\n\n```json\n{\n  "zone": "UTC"\n}\n```\n'
    )


def test_tool_results_are_fenced_json_or_text_with_their_images_named() -> None:
    message = Message(
        id="t1",
        parent_id="r1",
        role=Role.USER,
        kind=MessageKind.TOOL_RESULTS,
        tool_results=(
            ToolResult("c1", "[1, 2]", tool_name="calc"),
            ToolResult(
                "c2",
                "no such file",
                is_error=True,
                tool_name="read",
                images=(ImageBlock("image/png", "AA", "plot.png"),),
            ),
        ),
    )
    assert message_markdown(message) == (
        "**Tool result** `calc`\n\n```json\n[\n  1,\n  2\n]\n```\n\n"
        "**Tool error** `read`\n\n```\nno such file\n```\n\n*Image: plot.png*\n"
    )


def test_a_fence_is_longer_than_any_backtick_run_inside() -> None:
    assert fenced("a\n```py\nx\n```") == "````\na\n```py\nx\n```\n````"
    assert fenced("plain", "json") == "```json\nplain\n```"
