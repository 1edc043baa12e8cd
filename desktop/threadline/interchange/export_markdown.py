"""Markdown of a chat: the active path only, or every branch of its tree.

The active path is the transcript a person saw (``core.transcript``). "Every branch"
writes that path first, then each other branch once: a heading saying where it leaves
the part already written (the message it continues after) and the messages from there
to its leaf, so every message of the tree appears exactly once and nothing is repeated.
"""

from __future__ import annotations

from threadline.core.messages import Message, MessageKind
from threadline.core.session import SessionInfo
from threadline.core.transcript import transcript_markdown
from threadline.core.tree import ConversationTree

SESSION_SEPARATOR = "\n---\n\n"
"""Between chats when several are written to one Markdown file."""


def session_markdown(
    info: SessionInfo, tree: ConversationTree, *, all_branches: bool = False, include_thinking: bool = False
) -> str:
    """One chat as Markdown, titled; with ``all_branches`` every version of every message,
    with ``include_thinking`` each reply's reasoning as a quote block above it."""
    if not all_branches:
        return transcript_markdown(tree.path(), info.display_title, include_thinking=include_thinking)
    return branches_markdown(tree, info.display_title, include_thinking=include_thinking)


def branches_markdown(tree: ConversationTree, title: str = "", *, include_thinking: bool = False) -> str:
    """The active path, then every other branch from where it leaves what is already written."""
    written: set[str] = set()
    active = tree.path()
    parts = [transcript_markdown(active, title, include_thinking=include_thinking).rstrip()]
    written.update(m.id for m in active)
    number = 1
    for leaf in _leaves(tree):
        path = tree.path(leaf)
        new = [m for m in path if m.id not in written]
        if not new:
            continue
        number += 1
        written.update(m.id for m in new)
        parent = new[0].parent_id
        where = f"continues after: {_label(tree.get(parent))}" if parent is not None else "a separate start"
        branch = transcript_markdown(new, include_thinking=include_thinking).rstrip()
        parts.append(f"## Branch {number} ({where})\n\n" + branch)
    return "\n\n".join(parts) + "\n"


def _leaves(tree: ConversationTree) -> list[str]:
    """Every leaf, in the order a depth-first walk in version order meets them."""
    leaves: list[str] = []
    stack = [m.id for m in reversed(tree.children(None))]
    while stack:
        node = stack.pop()
        kids = tree.children(node)
        if not kids:
            leaves.append(node)
        stack.extend(m.id for m in reversed(kids))
    return leaves


def _label(message: Message) -> str:
    who = "Assistant" if message.is_assistant else "Summary" if message.kind is MessageKind.SUMMARY else "You"
    line = next((ln.strip() for ln in message.text.splitlines() if ln.strip()), "")
    if not line and message.tool_results:
        line = "tool results"
    if len(line) > 60:
        line = line[:59].rstrip() + "…"
    return f"{who}: “{line}”" if line else who
