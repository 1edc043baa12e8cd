"""A chat on a damaged page, opened in the running window: a banner with the whole advice and
Restore, clicked as a person would; the window comes back on the restored file.

Real files: a database of a few hundred chats, a healthy daily backup made by the store's own
code, then one page of the messages table overwritten. The chat whose messages lay on that
page is pinned (with plain SQL) so that it is the first row of the sidebar.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from tests.integration.store.test_damage_and_restore import write_chats
from tests.ui.conftest import AppHarness
from tests.unit.store.test_store_integrity import damage_a_messages_page

from threadline.store.backups import daily_backup, quick_check
from threadline.store.damage import marker_path
from threadline.ui.window.damage_recovery import install, shown_text
from threadline.ui.window.startup_dialog import backup_label
from threadline.ui.window.startup_recovery import StartupRecovery

TIMEOUT = 30000


def unreadable_chat(database: Path) -> str:
    """The id of a chat whose messages cannot be read any more."""
    connection = sqlite3.connect(database)
    try:
        for (session_id,) in connection.execute("SELECT id FROM sessions").fetchall():
            try:
                connection.execute("SELECT text FROM messages WHERE session_id = ?", (session_id,)).fetchall()
            except sqlite3.DatabaseError:
                connection.execute(
                    "UPDATE sessions SET pinned = 1, title = 'the damaged chat' WHERE id = ?", (session_id,)
                )
                connection.commit()
                return str(session_id)
    finally:
        connection.close()
    raise AssertionError("no chat lost its messages")


def click_row(harness: AppHarness, session_id: str) -> None:
    sidebar = harness.window.sidebar
    harness.qtbot.waitUntil(lambda: sidebar.model.index_of(session_id).isValid(), timeout=TIMEOUT)
    view = sidebar.list
    index = sidebar.model.index_of(session_id)
    view.scrollTo(index)
    harness.qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center())


async def _open_engine(data_dir: Path, database_url: str | None) -> Any:
    from threadline.engine.engine import Engine

    return await Engine.open(data_dir, database_url=database_url, watch_changes=True)


@pytest.mark.expected_log_warnings("damage met in the window", "daily backup")
def test_a_chat_on_a_damaged_page_offers_restore_where_it_fails(harness: AppHarness) -> None:
    database = harness.data_dir / "threadline.db"
    harness.run(write_chats(database), timeout=120000)
    # Today's backup exists, so opening takes none: the damage is met first by the read.
    midnight = datetime.now().replace(hour=0, minute=0, second=1, microsecond=0)
    backup = daily_backup(database, now=midnight)
    assert backup is not None
    damage_a_messages_page(database)
    # A damaged copy from before backups were checked, newer than the healthy one: never offered.
    bad = backup.with_name(f"threadline-{midnight + timedelta(minutes=1):%Y%m%d-%H%M%S}-daily.db")
    bad.write_bytes(database.read_bytes())
    damaged = unreadable_chat(database)

    window = harness.open(provider=False)
    first_engine = window.engine
    recovery = StartupRecovery(harness.data_dir, None, opener=_open_engine, parent_widget=window)
    replaced: list[Any] = []
    damage = install(window, recovery, replaced.append)

    click_row(harness, damaged)

    banner = window.damage_banner()
    harness.qtbot.waitUntil(banner.isVisible, timeout=TIMEOUT)
    text = shown_text(banner)
    assert "damaged" in text and f"in {backup.parent} " in text  # the whole path, not cut
    assert f"from {midnight:%Y-%m-%d %H:%M} " in text  # the newest healthy copy, not the newer damaged one
    assert "a read of the database" in marker_path(database).read_text()  # recorded for other processes
    assert str(database) in text
    label = banner.label
    assert label.height() >= label.heightForWidth(label.width())  # every line of it shows
    assert window.tabs.tab_for(damaged) is None
    button = banner.restore_button
    assert button.isVisible() and button.text() == f"Restore Backup from {backup_label(backup)}"
    assert button.toolTip() == str(backup)

    harness.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    harness.qtbot.waitUntil(lambda: bool(replaced) and window.engine is replaced[0], timeout=TIMEOUT)
    harness.engine = replaced[0]  # the harness closes the window's engine at the end
    assert first_engine is not replaced[0]
    harness.qtbot.waitUntil(lambda: not damage.restoring and "Restored the backup" in shown_text(banner))
    assert not marker_path(database).exists()
    assert quick_check(database) == []
    kept = [p for p in harness.data_dir.iterdir() if p.name.startswith("threadline.db.damaged-")]
    assert len(kept) == 1 and str(kept[0]) in shown_text(banner)

    click_row(harness, damaged)  # the chat, as it was in the backup, opens again
    harness.qtbot.waitUntil(lambda: window.tabs.tab_for(damaged) is not None, timeout=TIMEOUT)
    tab = window.tabs.tab_for(damaged)
    assert tab is not None and tab.live.conversation.path()


@pytest.mark.expected_log_warnings("daily backup")
def test_damage_recorded_by_another_process_is_shown_when_the_window_opens(harness: AppHarness) -> None:
    from threadline.store.damage import SEEN_BY_SELF_TEST, record_damage

    database = harness.data_dir / "threadline.db"
    harness.run(write_chats(database, 3))
    backup = daily_backup(database)
    assert backup is not None
    record_damage(database, SEEN_BY_SELF_TEST, "page 7 is damaged")  # as ``--self-test`` does

    window = harness.open(provider=False)
    recovery = StartupRecovery(harness.data_dir, None, opener=_open_engine, parent_widget=window)
    install(window, recovery, lambda engine: None)

    banner = window.damage_banner()
    assert banner.isVisible()
    assert "found by the self-test" in shown_text(banner)
    assert banner.restore_button.toolTip() == str(backup)
