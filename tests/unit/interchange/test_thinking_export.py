"""A reply's reasoning in the exports: a quote block in Markdown when asked for, always in
Threadline JSON (and read back unchanged, signatures included)."""

from __future__ import annotations

import json

from threadline.core.messages import Message, MessageStatus
from threadline.core.reasoning import SOURCE_ANTHROPIC, Reasoning
from threadline.core.session import SessionInfo
from threadline.core.tree import ConversationTree
from threadline.interchange.export_markdown import session_markdown
from threadline.interchange.threadline_json import dumps, parse_threadline


def chat() -> tuple[SessionInfo, ConversationTree, Message]:
    prompt = Message.prompt("What is 17 × 23?")
    reply = Message.reply(parent_id=prompt.id, text="391.", status=MessageStatus.COMPLETE)
    reply.reasoning = (
        Reasoning(
            "17 × 20 = 340\n17 × 3 = 51", signature="c2ln", source=SOURCE_ANTHROPIC, duration_ms=12_400
        ),
        Reasoning(redacted_data="ZW5j", source=SOURCE_ANTHROPIC),
    )
    tree = ConversationTree([prompt, reply], active_leaf=reply.id)
    return SessionInfo(id="s1", title="Sums", active_leaf=reply.id), tree, reply


def test_markdown_leaves_thinking_out_unless_asked() -> None:
    info, tree, _ = chat()
    plain = session_markdown(info, tree)
    assert "340" not in plain and "391." in plain
    shown = session_markdown(info, tree, include_thinking=True)
    assert "> **Thought for 12 s**\n>\n> 17 × 20 = 340\n> 17 × 3 = 51\n\n391." in shown
    assert session_markdown(info, tree, all_branches=True, include_thinking=True).count("Thought for") == 1


def test_threadline_json_round_trips_reasoning_with_signatures() -> None:
    info, tree, reply = chat()
    text = dumps([(info, list(tree))])
    assert json.loads(text)["sessions"][0]["messages"][1]["reasoning"][0]["signature"] == "c2ln"
    (imported,) = list(parse_threadline(json.loads(text)))
    assert not isinstance(imported, Exception)
    assert imported.messages[1].reasoning == reply.reasoning
