"""Documents attached through the composer as a person would: button, drop, paste; chips; the request.

The files are real (written by tests/support/documents.py); the model is the replay
SSE server, whose captured request must carry the extracted text. A screenshot of
the composer with a ready, a reading and a refused chip is written when
``THREADLINE_SHOTS`` names a folder.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog
from tests.support.documents import write_docx, write_encrypted_pdf, write_pdf, write_xlsx
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.ui.chat.composer.attachment_tray import ChipState


def reply(text: str) -> Any:
    return sse_response(openai_text_stream(split_text(text, 4), model="gpt-4o-mini"))


def last_user_text(harness: Any) -> str:
    body = [r for r in harness.server.requests if r.method == "POST"][-1].body
    user = [m for m in body["messages"] if m["role"] == "user"][-1]
    content = user["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


def chip_texts(tab: Any) -> list[str]:
    return [chip.label.text() for chip in tab.composer.chips.chips()]


def pick_files(harness: Any, tab: Any, monkeypatch: Any, paths: list[Path]) -> None:
    """Click Attach; the (patched) file dialog returns ``paths``; the dialog's filter lists documents."""
    seen: dict[str, str] = {}

    def dialog(parent: Any, caption: str, folder: str = "", filters: str = "", *a: Any) -> Any:
        seen["filters"] = filters
        return [str(p) for p in paths], ""

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", dialog)
    harness.qtbot.mouseClick(tab.composer.attach_button, Qt.MouseButton.LeftButton)
    assert all(f"*.{ext}" in seen["filters"] for ext in ("pdf", "docx", "xlsx", "pptx", "csv", "md", "html"))


def drop(widget: Any, paths: list[Path]) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    pos = QPointF(widget.rect().center())
    buttons, mods = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(pos.toPoint(), Qt.DropAction.CopyAction, mime, buttons, mods)
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted()
    event = QDropEvent(pos, Qt.DropAction.CopyAction, mime, buttons, mods)
    QApplication.sendEvent(widget, event)
    assert event.isAccepted()


def test_a_pdf_picked_with_the_attach_button_is_read_shown_and_sent(
    harness: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    pdf = write_pdf(tmp_path / "report.pdf", ["Revenue grew in PELICAN", "Costs fell on page two"])
    harness.server.enqueue(reply("Revenue grew."))
    harness.open()
    tab = new_tab(harness)
    pick_files(harness, tab, monkeypatch, [pdf])
    harness.qtbot.waitUntil(lambda: bool(tab.composer.attachments()), timeout=WAIT_MS)
    assert re.fullmatch(r"report\.pdf · 2 pages · ≈\d+ tokens", chip_texts(tab)[0]), chip_texts(tab)
    [attached] = tab.composer.attachments()
    assert attached.document_type == "pdf" and attached.page_count == 2
    # the meter counts the attached text with the draft
    assert tab.composer.meter._draft >= (len(attached.text) + 3) // 4
    type_and_send(harness.qtbot, tab, "What grew?")
    wait_idle(harness, tab)
    sent = last_user_text(harness)
    assert "--- Page 1 ---\nRevenue grew in PELICAN" in sent and "Costs fell on page two" in sent
    assert '<file name="report.pdf">' in sent
    assert not tab.composer.chips.isVisible()
    # stored with its facts: a reopened session knows it was a two-page PDF
    [prompt] = [m for m in tab.live.conversation.path() if m.context]
    assert prompt.context[0].page_count == 2
    tree = harness.run(harness.engine.store.load_tree(tab.session_id))
    assert [(c.document_type, c.page_count) for m in tree for c in m.context] == [("pdf", 2)]


def test_documents_dropped_on_the_conversation_are_attached_and_a_bad_one_says_why(
    harness: Any, tmp_path: Path
) -> None:
    docx = write_docx(tmp_path / "notes.docx")
    xlsx = write_xlsx(tmp_path / "budget.xlsx")
    locked = write_encrypted_pdf(tmp_path / "locked.pdf", "secret")
    harness.server.enqueue(reply("Done."))
    harness.open()
    tab = new_tab(harness)
    drop(tab.view.viewport(), [docx, xlsx, locked])
    harness.qtbot.waitUntil(lambda: not tab.composer.chips.reading_names(), timeout=WAIT_MS)
    states = [e.state for e in tab.composer.chips.entries()]
    assert states == [ChipState.READY, ChipState.READY, ChipState.FAILED]
    texts = chip_texts(tab)
    assert texts[0].startswith("notes.docx · ≈") and texts[1].startswith("budget.xlsx · 2 sheets · ≈")
    assert texts[2] == (
        "locked.pdf: This PDF is password-protected: Threadline cannot read it. "
        "Remove the password and attach it again."
    )
    assert [a.name for a in tab.composer.attachments()] == ["notes.docx", "budget.xlsx"]
    # remove the refused one with its ×, then send
    failed = tab.composer.chips.chips()[2]
    harness.qtbot.mouseClick(failed.close_button, Qt.MouseButton.LeftButton)
    assert len(tab.composer.chips.chips()) == 2
    type_and_send(harness.qtbot, tab, "Summarise")
    wait_idle(harness, tab)
    sent = last_user_text(harness)
    assert "Revenue grew by 12 percent in the PELICAN region." in sent
    assert "| Laptop | 1499 |" in sent and "secret" not in sent


def test_a_pasted_file_url_is_attached_not_pasted_as_text(harness: Any, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<h1>Release</h1><script>evil()</script><p>PELICAN ships</p>", encoding="utf-8")
    harness.open()
    tab = new_tab(harness)
    mime = QMimeData()
    mime.setText(QUrl.fromLocalFile(str(page)).toString())
    QApplication.clipboard().setMimeData(mime)
    tab.composer.edit.setFocus()
    harness.qtbot.keyClick(tab.composer.edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    harness.qtbot.waitUntil(lambda: bool(tab.composer.attachments()), timeout=WAIT_MS)
    assert tab.composer.text() == ""
    [attached] = tab.composer.attachments()
    assert attached.text == "# Release\n\nPELICAN ships"


def test_send_waits_while_a_document_is_read_and_removing_it_stops_the_reading(
    harness: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    import threadline.documents.extract as extract_module

    started = threading.Event()
    stopped = threading.Event()
    real = extract_module.extract_document

    def slow(path: Path, **kwargs: Any) -> Any:
        cancel = kwargs["cancel"]
        started.set()
        cancel.wait(60)  # a long read, ended only by removing the chip
        if cancel.is_set():
            stopped.set()
        return real(path, **kwargs)

    monkeypatch.setattr(extract_module, "extract_document", slow)
    pdf = write_pdf(tmp_path / "slow.pdf", ["Slow text"])
    harness.open()
    tab = new_tab(harness)
    drop(tab.composer, [pdf])
    type_and_send(harness.qtbot, tab, "Read it")
    assert chip_texts(tab) == ["slow.pdf · reading…"]
    assert not tab.composer.send_button.isEnabled()
    assert "Reading slow.pdf" in tab.composer.send_button.toolTip()
    assert tab.composer.text() == "Read it"  # nothing was sent
    harness.qtbot.waitUntil(started.is_set, timeout=WAIT_MS)  # the worker is reading
    chip = tab.composer.chips.chips()[0]
    harness.qtbot.mouseClick(chip.close_button, Qt.MouseButton.LeftButton)
    assert tab.composer.chips.entries() == [] and not tab.composer.chips.isVisible()
    harness.qtbot.waitUntil(stopped.is_set, timeout=WAIT_MS)
    assert tab.composer.send_button.isEnabled()


@pytest.mark.skipif(not os.environ.get("THREADLINE_SHOTS"), reason="screenshots only when asked for")
def test_screenshot_of_chips(harness: Any, tmp_path: Path, monkeypatch: Any) -> None:
    import threadline.documents.extract as extract_module

    release = threading.Event()
    real = extract_module.extract_document

    def held(path: Path, **kwargs: Any) -> Any:
        if path.name == "minutes.pdf":
            release.wait(60)
        return real(path, **kwargs)

    monkeypatch.setattr(extract_module, "extract_document", held)
    files = [
        write_pdf(tmp_path / "report.pdf", ["Quarterly revenue " * 40] * 12),
        write_xlsx(tmp_path / "budget.xlsx"),
        write_pdf(tmp_path / "minutes.pdf", ["x"]),
        write_pdf(tmp_path / "scan.pdf", ["", ""]),
    ]
    window = harness.open()
    window.resize(900, 640)
    tab = new_tab(harness)
    drop(tab.composer, files)
    harness.qtbot.waitUntil(lambda: len(tab.composer.attachments()) == 2, timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: ChipState.FAILED in [e.state for e in tab.composer.chips.entries()])
    harness.qtbot.keyClicks(tab.composer.edit, "Compare these")
    harness.qtbot.wait(200)
    shots = Path(os.environ["THREADLINE_SHOTS"])
    shots.mkdir(parents=True, exist_ok=True)
    tab.composer.grab().save(str(shots / "attachments-composer.png"))
    window.grab().save(str(shots / "attachments-window.png"))
    release.set()
    harness.qtbot.waitUntil(lambda: not tab.composer.chips.reading_names(), timeout=WAIT_MS)
