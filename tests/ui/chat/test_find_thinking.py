"""Find in a chat looks in replies' thinking too: a match inside a closed "Thought for 12 s"
block opens it and is shown as the current match; a match in the reply's text below an opened
thinking block is told apart from the same word in the thinking. Driven by keys (Ctrl+F, typing,
Enter) as a person would."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from tests.support.ui_fakes import FakeLive
from tests.support.waiting import WAIT_MS
from tests.ui.chat.test_find import current_on_screen, find, open_host

from threadline.core.conversation import Conversation
from threadline.core.find_text import searchable_parts, thinking_part
from threadline.core.messages import Message, MessageStatus
from threadline.core.reasoning import SOURCE_OPENAI, Reasoning
from threadline.core.tree import ConversationTree
from threadline.ui.chat.view.thinking_block import thinking_key

THOUGHT = "The kiwi is a flightless bird; a zebra is not a bird at all."
ANSWER = "A kiwi cannot fly."


def thinking_live() -> tuple[FakeLive, Message]:
    messages: list[Message] = []
    parent = None
    for i in range(12):
        prompt = Message.prompt(f"filler question {i}", parent_id=parent, id=f"q{i}")
        reply = Message.reply(
            parent_id=prompt.id, text=f"filler answer {i}", status=MessageStatus.COMPLETE, id=f"r{i}"
        )
        messages += [prompt, reply]
        parent = reply.id
    prompt = Message.prompt("Can a kiwi fly?", parent_id=parent, id="qk")
    reply = Message.reply(parent_id="qk", text=ANSWER, status=MessageStatus.COMPLETE, id="rk")
    reply = replace(reply, reasoning=(Reasoning(text=THOUGHT, source=SOURCE_OPENAI, duration_ms=12_000),))
    messages += [prompt, reply]
    for i in range(12, 20):
        later = Message.prompt(f"filler question {i}", parent_id=messages[-1].id, id=f"q{i}")
        answer = Message.reply(
            parent_id=later.id, text=f"filler answer {i}", status=MessageStatus.COMPLETE, id=f"r{i}"
        )
        messages += [later, answer]
    tree = ConversationTree(messages, active_leaf=messages[-1].id)
    return FakeLive(conversation=Conversation("s1", tree)), reply


def test_reasoning_is_a_searchable_part_keyed_like_the_views_block() -> None:
    _live, reply = thinking_live()
    parts = searchable_parts(reply)
    assert parts[0] == (thinking_part(reply.id), THOUGHT), "shown above the text, so searched first"
    assert thinking_part(reply.id) == thinking_key(reply.id)
    assert parts[1] == ("", ANSWER)


def test_a_match_in_closed_thinking_opens_it_and_is_shown(qtbot: Any, tmp_path: Path) -> None:
    live, reply = thinking_live()
    host = open_host(qtbot, live)
    closed = host.view.rendered_document(reply.id)
    assert closed is None or "zebra" not in closed.toPlainText()
    bar = find(qtbot, host, "zebra")
    assert bar.count.text() == "1 of 1"
    match = bar.current_match
    assert match is not None and match.part == thinking_part(reply.id)
    doc = host.view.rendered_document(reply.id)
    assert doc is not None and THOUGHT in doc.toPlainText(), "the thinking block was opened"
    qtbot.waitUntil(lambda: current_on_screen(host), timeout=WAIT_MS)
    assert host.bar.highlighter.current == (reply.id, 0)
    host.grab().save(str(tmp_path / "find-in-thinking.png"))


def test_the_same_word_in_thinking_and_in_the_text_are_two_matches(qtbot: Any) -> None:
    live, reply = thinking_live()
    host = open_host(qtbot, live)
    bar = find(qtbot, host, "kiwi")
    # "Can a kiwi fly?" (the prompt), the thinking, then the reply's text: three matches
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    while bar.current_match is not None and bar.current_match.part != thinking_part(reply.id):
        qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    assert bar.count.text().endswith("of 3")
    doc = host.view.rendered_document(reply.id)
    assert doc is not None
    occurrences = bar.highlighter.occurrences(doc)
    assert len(occurrences) == 2
    assert bar.highlighter.current == (reply.id, 0)
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    match = bar.current_match
    assert match is not None and match.part == "" and host.model.message_at(match.message_index) is not None
    assert bar.highlighter.current == (reply.id, 1), "the text's kiwi, below the thinking block"
    text_kiwi = QTextCursor(occurrences[1])
    block_text = doc.findBlock(text_kiwi.selectionStart()).text()
    assert block_text.strip() == ANSWER
    assert current_on_screen(host)
