"""A Markdown transcript of the active path, for export, copy and review.

It shows what the person saw, not what is sent: partial replies are marked,
tool calls and results appear as compact quoted blocks. A reply's reasoning is left
out unless asked for (``include_thinking``); then it is a quote block above the reply,
headed with how long the model thought.
"""

from __future__ import annotations

from collections.abc import Sequence

from threadline.core.messages import Message, MessageKind, MessageStatus
from threadline.core.reasoning import reasoning_text, thought_label

_STATUS_NOTES = {
    MessageStatus.CANCELLED: "*(stopped)*",
    MessageStatus.INTERRUPTED: "*(interrupted)*",
    MessageStatus.FAILED: "*(failed)*",
    MessageStatus.STREAMING: "*(still streaming)*",
}


def transcript_markdown(path: Sequence[Message], title: str = "", *, include_thinking: bool = False) -> str:
    parts: list[str] = [f"# {title}"] if title else []
    for message in path:
        parts.append(_section(message, include_thinking))
    return "\n\n".join(p for p in parts if p).rstrip() + "\n"


def _section(message: Message, include_thinking: bool = False) -> str:
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
    lines = [heading, ""]
    if include_thinking and message.reasoning:
        lines += [thinking_quote(message), ""]
    lines.append(message.text)
    for call in message.tool_calls:
        lines += ["", f"> **Tool call** `{call.name}`", ">", _quote(f"```json\n{call.arguments}\n```")]
    if message.sources:  # numbered as the model was told to cite them
        lines += ["", "*Sources:*"]
        lines += [f"{n}. {s.label}: {s.locator.describe()}" for n, s in enumerate(message.sources, start=1)]
    note = _STATUS_NOTES.get(message.status)
    if note:
        lines += ["", note]
    return "\n".join(lines).rstrip()


def thinking_quote(message: Message) -> str:
    """A reply's reasoning as a Markdown quote block headed "Thought for 12 s"."""
    label = thought_label(message.reasoning, thinking=False)
    text = reasoning_text(message.reasoning) or "(encrypted by the provider)"
    return f"> **{label}**\n>\n{_quote(text)}"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines()) or ">"
