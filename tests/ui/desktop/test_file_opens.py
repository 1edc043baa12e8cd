"""macOS's file opens (``QFileOpenEvent``) that come before the window are kept, then opened.

Finder starts the app with the file as an Apple Event, which Qt delivers as soon as the
application exists. The inbox is made the way macOS gets it (``platform="darwin"``; this
machine never sends the event itself, so the test posts a real one to the application).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QUrl
from PySide6.QtGui import QFileOpenEvent
from PySide6.QtWidgets import QApplication
from tests.support.waiting import WAIT_MS
from tests.ui.conftest import AppHarness
from tests.ui.desktop.test_tray_and_links import answer, question

from threadline.core.messages import Message, MessageStatus
from threadline.core.session import SessionInfo
from threadline.interchange.threadline_json import dumps
from threadline.ui.desktop import file_opens
from threadline.ui.desktop.citizen import DesktopCitizen
from threadline.ui.window.import_dialog import ImportReportDialog


@pytest.fixture
def inbox() -> Iterator[file_opens.FileOpenInbox]:
    app = QApplication.instance()
    assert app is not None
    made = file_opens.listen(app, platform="darwin")
    assert made is not None
    yield made
    made.close()


def test_a_file_opened_before_the_window_exists_opens_once_it_is_up(
    harness: AppHarness, tmp_path: Path, inbox: file_opens.FileOpenInbox
) -> None:
    prompt = Message.prompt("question", id="q1")
    reply = Message.reply(parent_id="q1", text="answer", status=MessageStatus.COMPLETE, id="r1")
    export = tmp_path / "early.json"
    export.write_text(dumps([(SessionInfo(id="early-1", title="Early"), [prompt, reply])]), encoding="utf-8")
    app = QApplication.instance()
    assert app is not None and harness.window is None
    QCoreApplication.postEvent(app, QFileOpenEvent(str(export)))
    QCoreApplication.sendPostedEvents(app)
    assert inbox.waiting == [str(export)]  # taken from the system and kept, not dropped

    harness.open()
    citizen = DesktopCitizen(harness.window, harness.engine)  # as the app does once the engine is open
    harness.run(citizen.prefs.load(harness.engine))
    box = question(harness, citizen)
    assert "early.json" in box.text()
    assert inbox.waiting == []
    answer(box, "Import")
    harness.qtbot.waitUntil(
        lambda: any(d.isVisible() for d in harness.window.findChildren(ImportReportDialog)), timeout=WAIT_MS
    )
    for dialog in harness.window.findChildren(ImportReportDialog):
        dialog.accept()
    ids = {i.id for i in harness.run(harness.engine.sessions.list_sessions(limit=100))}
    assert "early-1" in ids


def test_a_link_opened_while_the_window_is_up_opens_at_once(
    harness: AppHarness, inbox: file_opens.FileOpenInbox
) -> None:
    harness.open()
    citizen = DesktopCitizen(harness.window, harness.engine)
    harness.run(citizen.prefs.load(harness.engine))
    app = QApplication.instance()
    assert app is not None
    QCoreApplication.postEvent(app, QFileOpenEvent(QUrl("threadline://new?prompt=hello")))
    box = question(harness, citizen)
    assert "new chat" in box.text()
    assert inbox.waiting == []
    answer(box, "Cancel")
    harness.qtbot.waitUntil(lambda: not citizen.requests.questions, timeout=WAIT_MS)
