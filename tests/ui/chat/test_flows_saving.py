"""What the tab shows when the database refuses writes: nothing typed is lost, "saved" only when it is.

The database is made to refuse writes the way a full disk does, with a real SQLite
trigger added from another connection (as another program would), so the store,
the engine and the tab all meet the real error.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from tests.support.refusing_db import accept, refuse
from tests.support.sse_server import openai_text_stream, split_text, sse_response
from tests.support.ui_driving import new_tab_by_click as new_tab
from tests.support.ui_driving import type_and_send, wait_idle
from tests.support.waiting import WAIT_MS

from threadline.engine.engine import DATABASE_FILENAME


def stored_texts(path: Path, session_id: str) -> list[str]:
    connection = sqlite3.connect(path)
    try:
        rows = connection.execute(
            "SELECT text FROM messages WHERE session_id = ? ORDER BY ordinal", (session_id,)
        )
        return [str(r[0]) for r in rows]
    finally:
        connection.close()


@pytest.mark.expected_log_warnings
def test_a_prompt_the_disk_refuses_comes_back_to_the_composer_and_nothing_is_sent(harness: Any) -> None:
    harness.open()
    tab = new_tab(harness)
    db = harness.data_dir / DATABASE_FILENAME
    refuse(db, "INSERT")
    type_and_send(harness.qtbot, tab, "Keep these words")
    harness.qtbot.waitUntil(lambda: tab.banner.isVisible() and tab.banner.error is not None, timeout=WAIT_MS)
    assert "full" in tab.banner.label.text().lower()
    said = tab.banner.label.text().lower()
    assert "not sent" in said and not any(claim in said for claim in ("are saved", "is saved", "was saved"))
    harness.qtbot.waitUntil(lambda: tab.composer.text() == "Keep these words", timeout=WAIT_MS)
    assert harness.server.stream_requests() == []  # nothing went to the model
    assert stored_texts(db, tab.session_id) == []

    accept(db, "INSERT")
    harness.server.enqueue(sse_response(openai_text_stream(split_text("Stored this time.", 3))))
    wait_idle(harness, tab)
    harness.qtbot.mouseClick(tab.composer.send_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: tab.composer.text() == "", timeout=WAIT_MS)
    wait_idle(harness, tab)
    harness.qtbot.waitUntil(
        lambda: stored_texts(db, tab.session_id) == ["Keep these words", "Stored this time."], timeout=WAIT_MS
    )


@pytest.mark.expected_log_warnings
def test_a_reply_the_disk_refuses_shows_saving_holds_sending_and_is_stored_later(harness: Any) -> None:
    harness.server.enqueue(
        sse_response(
            openai_text_stream(split_text("A reply that waits for space. " * 8, 6)), chunk_delay=0.01
        )
    )
    harness.open()
    tab = new_tab(harness)
    db = harness.data_dir / DATABASE_FILENAME
    refuse(db, "UPDATE")  # the prompt and the reply's first row go in; its text cannot be written
    type_and_send(harness.qtbot, tab, "Write something long")
    harness.qtbot.waitUntil(lambda: "Saving" in tab.composer.held_reason, timeout=WAIT_MS)
    harness.qtbot.waitUntil(lambda: tab.banner.isVisible() and tab.banner.error is not None, timeout=WAIT_MS)
    assert "full" in tab.banner.label.text().lower()
    assert tab.composer.held_reason == "Saving…"  # sending is held while saving
    harness.qtbot.waitUntil(  # the whole reply arrives and is kept in memory meanwhile
        lambda: tab.live.conversation.path()[-1].text == "A reply that waits for space. " * 8, timeout=WAIT_MS
    )
    assert "Saving" in tab.composer.held_reason  # still not stored: still held

    accept(db, "UPDATE")
    harness.qtbot.waitUntil(lambda: tab.composer.held_reason == "", timeout=WAIT_MS)
    wait_idle(harness, tab)
    stored = stored_texts(db, tab.session_id)
    assert stored[0] == "Write something long"
    assert stored[-1] == ("A reply that waits for space. " * 8)
