"""What the branch map says about a message: its tooltip and what a screen reader hears.

Who wrote it and when, which version it is, whether it is in a tangent or carries a
checkpoint, a short excerpt, and what a click would do — the same facts in plain
text (accessible description) and lightly formatted rich text (tooltip).
"""

from __future__ import annotations

import html

from threadline.core.messages import Message, MessageKind, MessageStatus
from threadline.core.tree import ConversationTree, TreeError
from threadline.ui.chat.branch_map.branch_map_style import ROLE_NAMES, node_role

EXCERPT_CHARS = 140


def excerpt(message: Message, limit: int = EXCERPT_CHARS) -> str:
    """One line of the message: its text, else what it did (tool names, a marker's label)."""
    text = message.text
    if not text.strip() and message.tool_calls:
        text = "Calls " + ", ".join(c.name for c in message.tool_calls)
    elif not text.strip() and message.tool_results:
        names = ", ".join(dict.fromkeys(r.tool_name or "a tool" for r in message.tool_results))
        text = f"Results of {names}"
    elif message.kind is MessageKind.MARKER and message.marker is not None:
        text = message.marker.label
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def describe_message(
    message: Message,
    tree: ConversationTree,
    *,
    on_path: bool,
    tangent: bool,
    checkpoint: str = "",
    rich: bool = False,
) -> str:
    when = message.created_at.astimezone()
    facts = [ROLE_NAMES[node_role(message)], f"{when.day} {when:%b %H:%M}"]
    try:
        version = tree.version(message.id)
    except (TreeError, ValueError, KeyError):
        version = None
    if version is not None and version.count > 1:
        facts.append(f"version {version.index} of {version.count}")
    if tangent:
        facts.append("in a tangent")
    if message.status is not MessageStatus.COMPLETE:
        facts.append(message.status.value)
    if checkpoint:
        facts.append(f"checkpoint “{checkpoint}”")
    action = "On the shown path — click to scroll to it" if on_path else "Click to show this branch"
    head = " · ".join(facts)
    body = excerpt(message)
    if not rich:
        return f"{head}. {body} {action}." if body else f"{head}. {action}."
    quoted = f"<br>{html.escape(body)}" if body else ""
    return f"<b>{html.escape(head)}</b>{quoted}<br><i>{html.escape(action)}</i>"
