"""A Markdown transcript of the active path, for export, copy and review.

It shows what the person saw, not what is sent: partial replies are marked,
tool calls and results appear as compact quoted blocks.
"""

from __future__ import annotations

from collections.abc import Sequence

from threadline.core.messages import Message, MessageKind, MessageStatus

_STATUS_NOTES = {
    MessageStatus.CANCELLED: "*(stopped)*",
    MessageStatus.INTERRUPTED: "*(interrupted)*",
    MessageStatus.FAILED: "*(failed)*",
    MessageStatus.STREAMING: "*(still streaming)*",
}


def transcript_markdown(path: Sequence[Message], title: str = "") -> str:
    parts: list[str] = [f"# {title}"] if title else []
    for message in path:
        parts.append(_section(message))
    return "\n\n".join(p for p in parts if p).rstrip() + "\n"


def _section(message: Message) -> str:
    if message.marker is not None:
        return f"---\n\n*{message.marker.label}*"
    if message.kind is MessageKind.SUMMARY:
        return f"> **Summary of earlier messages**\n>\n{_quote(message.text)}"
    if message.kind is MessageKind.PROMPT:
        lines = ["## You", "", message.text]
        lines += [f"*Attached: {c.name}*" for c in message.context]
        lines += [f"*Image: {i.name or i.media_type}*" for i in message.images]
        return "\n".join(lines).rstrip()
    if message.kind in (MessageKind.TOOL_RESULTS, MessageKind.CANCELLED_TOOL_USES):
        blocks = []
        for result in message.tool_results:
            label = "Tool error" if result.is_error else "Tool result"
            blocks.append(f"> **{label}** `{result.tool_name or result.call_id}`\n>\n{_quote(result.text)}")
        return "\n\n".join(blocks)
    model = message.metadata.model if message.metadata and message.metadata.model else ""
    heading = f"## Assistant ({model})" if model else "## Assistant"
    lines = [heading, "", message.text]
    for call in message.tool_calls:
        lines += ["", f"> **Tool call** `{call.name}`", ">", _quote(f"```json\n{call.arguments}\n```")]
    note = _STATUS_NOTES.get(message.status)
    if note:
        lines += ["", note]
    return "\n".join(lines).rstrip()


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines()) or ">"
