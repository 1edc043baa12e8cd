"""File → Import… and File → Export…, a file dropped on the window, the progress dialog's Cancel and
the report, driven as a person would (menus, clicks); the native file dialogs are answered by
replacing QFileDialog's static calls, as the other UI tests do."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPoint, Qt, QTimer, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QProgressDialog, QPushButton
from tests.support.chat_trees import Chat, store_chat
from tests.ui.conftest import AppHarness

from threadline.core.messages import Message, MessageStatus
from threadline.core.session import SessionInfo
from threadline.interchange.threadline_json import dumps
from threadline.store.repository import Store
from threadline.ui.window.export_dialog import ExportDialog
from threadline.ui.window.import_dialog import ImportReportDialog

TIMEOUT = 30000


def chat(n: int) -> tuple[SessionInfo, list[Message]]:
    prompt = Message.prompt(f"question number {n}", id=f"q{n}")
    reply = Message.reply(
        parent_id=f"q{n}", text=f"reply number {n}", status=MessageStatus.COMPLETE, id=f"r{n}"
    )
    return SessionInfo(id=f"file-chat-{n}", title=f"From the file {n}"), [prompt, reply]


def export_file(folder: Path, count: int) -> Path:
    path = folder / "chats.json"
    path.write_text(dumps(chat(n) for n in range(count)), encoding="utf-8")
    return path


def open_with(harness: AppHarness, chats: list[Chat]) -> None:
    async def fill() -> None:
        harness.data_dir.mkdir(parents=True, exist_ok=True)
        store = await Store.open(Store.sqlite_url(harness.data_dir / "threadline.db"))
        try:
            for each in chats:
                await store_chat(store, each)
        finally:
            await store.close()

    if chats:
        harness.run(fill())
    harness.open()


def choose_from_file_menu(harness: AppHarness, text: str) -> None:
    bar = harness.window.menuBar()
    file_menu = next(a.menu() for a in bar.actions() if a.text() == "&File")
    action = next(a for a in file_menu.actions() if a.text() == text)
    QTimer.singleShot(0, action.trigger)


def when_dialog(kind: type, handle: Callable[[Any], None]) -> None:
    def look() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, kind) or not dialog.isVisible():
            QTimer.singleShot(10, look)
            return
        handle(dialog)

    QTimer.singleShot(0, look)


def report(harness: AppHarness) -> ImportReportDialog:
    found: list[ImportReportDialog] = []

    def shown() -> bool:
        found[:] = [d for d in harness.window.findChildren(ImportReportDialog) if d.isVisible()]
        return bool(found)

    harness.qtbot.waitUntil(shown, timeout=TIMEOUT)
    return found[0]


def stored_ids(harness: AppHarness) -> set[str]:
    infos = harness.run(harness.engine.sessions.list_sessions(limit=10_000))
    return {i.id for i in infos}


def test_file_import_shows_the_report_and_the_chats(
    harness: AppHarness, tmp_path: Path, monkeypatch: Any
) -> None:
    path = export_file(tmp_path, 3)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))
    open_with(harness, [])
    choose_from_file_menu(harness, "&Import…")
    dialog = report(harness)
    assert dialog.summary.text().startswith("From chats.json: 3 chats imported, 0 chats updated")
    assert not dialog.failures.isVisible()
    harness.qtbot.waitUntil(
        lambda: all(harness.window.sidebar.model.index_of(f"file-chat-{n}").isValid() for n in range(3)),
        timeout=TIMEOUT,
    )
    dialog.reject()


def test_a_damaged_chat_is_listed_with_its_title_and_reason(
    harness: AppHarness, tmp_path: Path, monkeypatch: Any
) -> None:
    path = export_file(tmp_path, 2)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["sessions"][1]["messages"][1]["parent_id"] = "nowhere"
    path.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))
    open_with(harness, [])
    choose_from_file_menu(harness, "&Import…")
    dialog = report(harness)
    assert "1 chat imported" in dialog.summary.text() and "1 chat not imported" in dialog.summary.text()
    assert dialog.failures.isVisible() and "“From the file 1”" in dialog.failures.toPlainText()
    assert stored_ids(harness) == {"file-chat-0"}
    dialog.reject()


def test_a_file_dropped_on_the_window_is_imported(harness: AppHarness, tmp_path: Path) -> None:
    path = export_file(tmp_path, 2)
    open_with(harness, [])
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    window = harness.window
    at = QPoint(window.width() // 2, window.height() // 2)
    drop = QDropEvent(
        at, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    window.dropEvent(drop)
    assert drop.isAccepted()
    report(harness).reject()
    assert stored_ids(harness) == {"file-chat-0", "file-chat-1"}


def test_cancel_stops_the_import_and_leaves_only_whole_chats(
    harness: AppHarness, tmp_path: Path, monkeypatch: Any
) -> None:
    path = export_file(tmp_path, 400)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))
    open_with(harness, [])
    choose_from_file_menu(harness, "&Import…")
    progress: list[QProgressDialog] = []

    def started() -> bool:
        progress[:] = [p for p in harness.window.findChildren(QProgressDialog) if p.isVisible()]
        return bool(progress) and "chats —" in progress[0].labelText()

    harness.qtbot.waitUntil(started, timeout=TIMEOUT)
    cancel = next(b for b in progress[0].findChildren(QPushButton) if b.text() == "Cancel")
    harness.qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    dialog = report(harness)
    assert "cancelled" in dialog.summary.text()
    ids = stored_ids(harness)
    assert len(ids) < 400
    for sid in ids:
        assert len(harness.run(harness.engine.store.load_tree(sid))) == 2, "a chat is whole or absent"
    dialog.reject()


def answer_export(scope: str, fmt_text: str) -> Callable[[ExportDialog], None]:
    def handle(dialog: ExportDialog) -> None:
        getattr(dialog, scope).click()
        next(b for b in dialog.formats.buttons() if b.text().startswith(fmt_text)).click()
        dialog.export_button.click()

    return handle


def test_file_export_of_everything_as_threadline_json(
    harness: AppHarness, tmp_path: Path, monkeypatch: Any
) -> None:
    target = tmp_path / "out.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    info, messages = chat(1)
    archived = SessionInfo(id="old", title="Archived one", archived=True)
    open_with(harness, [Chat(info, messages), Chat(archived, [Message.prompt("old words", id="o1")])])
    when_dialog(ExportDialog, answer_export("everything", "Threadline JSON"))
    choose_from_file_menu(harness, "E&xport…")
    harness.qtbot.waitUntil(lambda: target.exists(), timeout=TIMEOUT)
    data = json.loads(target.read_text(encoding="utf-8"))
    assert sorted(s["id"] for s in data["sessions"]) == ["file-chat-1", "old"]
    harness.qtbot.waitUntil(
        lambda: "Exported to" in harness.window.statusBar().currentMessage(), timeout=TIMEOUT
    )


@pytest.mark.parametrize("fmt_text", ["Markdown — the conversation", "Markdown — every version"])
def test_export_of_the_chats_selected_in_the_sidebar_as_markdown(
    harness: AppHarness, tmp_path: Path, monkeypatch: Any, fmt_text: str
) -> None:
    target = tmp_path / "chosen.md"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    chats = [Chat(*chat(n)) for n in range(3)]
    chats[0].messages.append(Message.reply(parent_id="q0", text="a second version", id="v2"))
    chats[0].info = SessionInfo(id="file-chat-0", title="From the file 0", active_leaf="r0")
    open_with(harness, chats)
    sidebar = harness.window.sidebar
    harness.qtbot.waitUntil(lambda: sidebar.model.index_of("file-chat-2").isValid(), timeout=TIMEOUT)
    for sid in ("file-chat-0", "file-chat-2"):
        index = sidebar.model.index_of(sid)
        harness.qtbot.mouseClick(
            sidebar.list.viewport(),
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.ControlModifier,
            sidebar.list.visualRect(index).center(),
        )
    assert sorted(sidebar.selected_ids()) == ["file-chat-0", "file-chat-2"]
    seen: list[bool] = []

    def handle(dialog: ExportDialog) -> None:
        seen.append(dialog.selected_chats.isChecked())
        answer_export("selected_chats", fmt_text)(dialog)

    when_dialog(ExportDialog, handle)
    sidebar.exportRequested.emit(sidebar.selected_ids())
    harness.qtbot.waitUntil(lambda: target.exists(), timeout=TIMEOUT)
    assert seen == [True], "the sidebar's selection comes preselected"
    text = target.read_text(encoding="utf-8")
    assert "From the file 0" in text and "From the file 2" in text and "From the file 1" not in text
    assert ("a second version" in text) == fmt_text.endswith("every version")
