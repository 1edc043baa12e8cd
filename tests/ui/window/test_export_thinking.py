"""File → Export… with "Include thinking": the box puts replies' reasoning in a Markdown export as
a quote block, leaves it out unticked, and is disabled (ticked) for Threadline JSON, which always
carries reasoning. Driven through the dialog as a person would; the save dialog is answered by
replacing QFileDialog's static call, as the other export tests do."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QFileDialog, QStyle, QStyleOptionButton
from tests.support.chat_trees import Chat
from tests.ui.conftest import AppHarness
from tests.ui.window.test_import_export_window import choose_from_file_menu, open_with, when_dialog

from threadline.core.messages import Message, MessageStatus
from threadline.core.reasoning import SOURCE_OPENAI, Reasoning
from threadline.core.session import SessionInfo
from threadline.ui.window.export_dialog import ExportDialog

TIMEOUT = 30000
REASONING = "The user asks for a prime; 7 has no divisors but 1 and itself."


def thinking_chat() -> Chat:
    prompt = Message.prompt("give me a prime", id="q1")
    reply = Message.reply(parent_id="q1", text="7 is prime.", status=MessageStatus.COMPLETE, id="r1")
    reply = replace(reply, reasoning=(Reasoning(text=REASONING, source=SOURCE_OPENAI, duration_ms=12_000),))
    return Chat(SessionInfo(id="thinking-chat", title="Primes"), [prompt, reply])


def tick_box(qtbot: Any, box: QCheckBox) -> None:
    """Click the box's square, where a person clicks (the widget may be wider than its text)."""
    option = QStyleOptionButton()
    box.initStyleOption(option)
    square = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=square.center())


def export_with(
    harness: AppHarness, target: Path, monkeypatch: Any, fmt_text: str, tick: bool
) -> tuple[str, list[tuple[bool, bool]]]:
    """Export the one chat through the dialog; returns the file's text and, per dialog, the box's
    (enabled, checked) once the format was chosen."""
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    seen: list[tuple[bool, bool]] = []

    def handle(dialog: ExportDialog) -> None:
        dialog.everything.click()
        next(b for b in dialog.formats.buttons() if b.text().startswith(fmt_text)).click()
        box = dialog.include_thinking
        if tick and box.isEnabled():
            tick_box(harness.qtbot, box)
        seen.append((box.isEnabled(), box.isChecked()))
        dialog.export_button.click()

    when_dialog(ExportDialog, handle)
    choose_from_file_menu(harness, "E&xport…")
    harness.qtbot.waitUntil(lambda: target.exists(), timeout=TIMEOUT)
    return target.read_text(encoding="utf-8"), seen


def test_ticked_box_puts_the_reasoning_in_the_markdown(
    harness: AppHarness, tmp_path: Path, monkeypatch: Any
) -> None:
    open_with(harness, [thinking_chat()])
    text, seen = export_with(harness, tmp_path / "with.md", monkeypatch, "Markdown — the conversation", True)
    assert seen == [(True, True)]
    assert "> **Thought for 12 s**" in text
    assert f"> {REASONING}" in text
    assert text.index(REASONING) < text.index("7 is prime."), "the thinking is above the reply"


def test_unticked_box_leaves_the_reasoning_out(harness: AppHarness, tmp_path: Path, monkeypatch: Any) -> None:
    open_with(harness, [thinking_chat()])
    text, seen = export_with(harness, tmp_path / "without.md", monkeypatch, "Markdown — every version", False)
    assert seen == [(True, False)]
    assert "7 is prime." in text
    assert REASONING not in text and "Thought for" not in text


def test_json_always_carries_the_reasoning_and_the_box_says_so(
    harness: AppHarness, tmp_path: Path, monkeypatch: Any
) -> None:
    open_with(harness, [thinking_chat()])
    text, seen = export_with(harness, tmp_path / "all.json", monkeypatch, "Threadline JSON", False)
    assert seen == [(False, True)], "disabled and shown ticked: JSON always has the reasoning"
    reply = next(m for m in json.loads(text)["sessions"][0]["messages"] if m["id"] == "r1")
    assert REASONING in json.dumps(reply)


def test_the_markdown_choice_comes_back_after_json(qtbot: Any) -> None:
    dialog = ExportDialog(None, current="a", selected=[])
    qtbot.addWidget(dialog)
    dialog.show()
    box = dialog.include_thinking
    assert box.isEnabled() and not box.isChecked()
    json_button = next(b for b in dialog.formats.buttons() if b.text().startswith("Threadline JSON"))
    markdown = next(b for b in dialog.formats.buttons() if b.text().startswith("Markdown — the"))
    json_button.click()
    assert not box.isEnabled() and box.isChecked() and dialog.thinking_included()
    markdown.click()
    assert box.isEnabled() and not box.isChecked() and not dialog.thinking_included()
    tick_box(qtbot, box)
    json_button.click()
    markdown.click()
    assert box.isChecked() and dialog.thinking_included()
