"""A thinking model in the window: the reasoning streams in an open "Thinking…" block above
the reply, closes to "Thought for N s" when the answer starts, and a click (or Space on the
message) opens it again. Real engine, byte-exact replays; screenshots in light and dark.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from tests.support.sse_server import load_sse_fixture, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle

from threadline.core.messages import MessageStatus
from threadline.ui.chat.view.thinking_block import thinking_key
from threadline.ui.common.theme import ThemeChoice

TIMEOUT = 20000
THOUGHT = "The user asks for 17 × 23. 17 × 20 = 340, 17 × 3 = 51, so 391."


def shot(widget: Any, tmp_path: Path, name: str) -> None:
    """Save a screenshot (also to $THREADLINE_SHOTS, to look at them after a run)."""
    image = widget.grab()
    assert image.save(str(tmp_path / name))
    if folder := os.environ.get("THREADLINE_SHOTS"):
        image.save(str(Path(folder) / name))


def shown_text(tab: Any, message_id: str) -> str:
    doc = tab.view.rendered_document(message_id)
    return "" if doc is None else doc.toPlainText().strip()


def test_thinking_streams_open_then_stop_keeps_it(harness: Any, tmp_path: Path) -> None:
    # The server sends the role and five reasoning chunks, then nothing more: the model "thinks".
    stream = load_sse_fixture("openai_reasoning_content.sse")
    harness.server.enqueue(sse_response(stream, stall_after=6))
    window = harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "What is 17 × 23?")
    harness.qtbot.waitUntil(
        lambda: (
            tab.model.rowCount() == 2
            and THOUGHT.split(".")[-2] in shown_text(tab, tab.model.message_at(1).id)
        ),
        timeout=TIMEOUT,
    )
    reply = tab.model.message_at(1)
    assert reply.text == "" and reply.reasoning[0].text == THOUGHT
    text = shown_text(tab, reply.id)
    assert text.startswith("▾ Thinking…") and "17 × 20 = 340" in text
    shot(window, tmp_path, "thinking_streaming.png")

    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_Escape)  # Stop
    wait_idle(harness, tab, timeout=TIMEOUT)
    stopped = tab.live.conversation.path()[-1]
    assert stopped.status is MessageStatus.CANCELLED and stopped.reasoning[0].text == THOUGHT
    harness.qtbot.waitUntil(lambda: "Thought for" in shown_text(tab, stopped.id), timeout=TIMEOUT)
    assert "17 × 20" not in shown_text(tab, stopped.id)  # closed once the thinking is over


def test_thought_collapses_when_the_answer_starts_and_opens_on_click(harness: Any, tmp_path: Path) -> None:
    harness.server.enqueue(sse_response(load_sse_fixture("openai_reasoning_content.sse"), chunk_delay=0.05))
    window = harness.open()
    tab = new_tab(harness)
    type_and_send(harness.qtbot, tab, "What is 17 × 23?")
    wait_idle(harness, tab, timeout=TIMEOUT)
    reply = tab.live.conversation.path()[-1]
    assert reply.text == "17 × 23 = **391**."  # the reasoning is not part of the reply
    view = tab.view
    harness.qtbot.waitUntil(lambda: "Thought for" in shown_text(tab, reply.id), timeout=TIMEOUT)
    closed = shown_text(tab, reply.id)
    assert closed.startswith("▸ Thought for ") and "17 × 20" not in closed and "= 391." in closed
    shot(window, tmp_path, "thinking_collapsed_light.png")

    toggle = view.anchor_rect(reply.id, f"toggle:{thinking_key(reply.id)}")
    assert toggle is not None
    harness.qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=toggle.center())
    harness.qtbot.waitUntil(lambda: "17 × 20 = 340" in shown_text(tab, reply.id), timeout=TIMEOUT)
    assert shown_text(tab, reply.id).startswith("▾ Thought for ")
    shot(window, tmp_path, "thinking_open_light.png")

    window.set_theme(ThemeChoice.DARK)
    harness.qtbot.waitUntil(lambda: "17 × 20 = 340" in shown_text(tab, reply.id), timeout=TIMEOUT)
    shot(window, tmp_path, "thinking_open_dark.png")

    # Space on the focused message closes it again (the menu names the key).
    view.setFocus()
    assert view.set_current_message(reply.id)
    assert "toggle_thinking" in view.offered_commands(reply.id)
    harness.qtbot.keyClick(view, Qt.Key.Key_Space)
    harness.qtbot.waitUntil(lambda: "17 × 20" not in shown_text(tab, reply.id), timeout=TIMEOUT)
    shot(window, tmp_path, "thinking_collapsed_dark.png")
    window.set_theme(ThemeChoice.LIGHT)
