"""Sample messages of every kind, shared by the store tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from threadline.core.messages import (
    ContextFile,
    ImageBlock,
    Marker,
    MarkerType,
    Message,
    MessageStatus,
    RequestMetadata,
    ResourceRef,
    ToolCall,
    ToolResult,
)

T0 = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def every_kind() -> list[Message]:
    """A linear conversation holding one message of each kind, with every field set."""
    prompt = Message.prompt(
        "Look at this picture\nand the notes",
        images=(ImageBlock("image/png", "aGVsbG8=", name="cat.png"), ImageBlock("image/jpeg", "d29ybGQ=")),
        context=(ContextFile("notes.md", "# Notes\nline two"),),
    ).copy(created_at=at(0))
    meta = RequestMetadata(
        provider="openai",
        model="gpt-test",
        request_id="req_1",
        started_at=at(1),
        ended_at=at(3),
        time_to_first_token_ms=250.5,
        input_tokens=120,
        output_tokens=33,
        stop_reason="tool_use",
        error="",
    )
    calls = (
        ToolCall("call_1", "git/status", '{"path": "."}'),
        ToolCall("call_2", "shell", '{"cmd": "ls"}'),
    )
    reply = Message.reply(
        parent_id=prompt.id,
        text="Let me check.",
        tool_calls=calls,
        status=MessageStatus.COMPLETE,
        metadata=meta,
    ).copy(created_at=at(2))
    results = Message.tool_results_message(
        (
            ToolResult(
                "call_1",
                text='{"clean": true}',
                tool_name="git/status",
                resources=(
                    ResourceRef("everything", "demo://a", "Note A", "text/markdown"),
                    ResourceRef("everything", "demo://b", mime_type="text/plain", embedded=True, text="bee"),
                    ResourceRef("everything", "demo://c", embedded=True, size=3),
                ),
            ),
            ToolResult(
                "call_2", text="boom", images=(ImageBlock("image/png", "eA==", "shot"),), is_error=True
            ),
        ),
        parent_id=reply.id,
    ).copy(created_at=at(4))
    reply2 = Message.reply(
        parent_id=results.id,
        tool_calls=(ToolCall("call_3", "rm", "{}"),),
        status=MessageStatus.COMPLETE,
        metadata=RequestMetadata(provider="anthropic", model="claude", error="overloaded"),
    ).copy(created_at=at(5))
    cancelled = Message.cancelled_tool_uses(
        reply2.tool_calls, parent_id=reply2.id, reason="too dangerous"
    ).copy(created_at=at(6))
    summary = Message.summary(
        "The user showed a cat.", parent_id=cancelled.id, summarised_through=reply.id
    ).copy(created_at=at(7))
    final = Message.reply(
        parent_id=summary.id, text="Partial answ", status=MessageStatus.CANCELLED, metadata=None
    ).copy(created_at=at(8))
    marker = Message.marker_message(
        Marker(
            MarkerType.AGENT, "Reviewer", detail="new settings", settings={"name": "Reviewer", "top_p": 0.5}
        ),
        parent_id=final.id,
    ).copy(created_at=at(9))
    return [prompt, reply, results, reply2, cancelled, summary, final, marker]
