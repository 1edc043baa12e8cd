"""The start-up dialog when the conversations cannot be opened: advice, the folder, a backup, retry.

Real files: a garbage file where the database should be, a database whose schema is from
the future, a real backup made with the store's own backup code. The dialog is opened
with ``open()``; the test clicks its buttons as a person would.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from tests.support.waiting import WAIT_MS

from threadline.ui.window.startup_dialog import StartupProblemDialog
from threadline.ui.window.startup_recovery import DATABASE_FILENAME, StartupRecovery

GARBAGE = b"this is my shopping list, not a database\n" * 200


async def _open_engine(data_dir: Path, database_url: str | None) -> Any:
    from threadline.engine.engine import Engine

    return await Engine.open(data_dir, database_url=database_url)


def _make_database(run: Any, data_dir: Path) -> None:
    engine = run(_open_engine(data_dir, None))
    run(engine.sessions.new_session("kept in the backup"))
    run(engine.aclose())


class Recovery:
    """A ``StartupRecovery`` running as a task, with the folders it was asked to open."""

    def __init__(self, qloop: Any, qtbot: Any, data_dir: Path) -> None:
        self.opened_folders: list[Path] = []
        self.recovery = StartupRecovery(
            data_dir, None, opener=_open_engine, open_folder=self.opened_folders.append
        )
        self.qtbot = qtbot
        self.task = qloop.create_task(self.recovery.open_engine())

    def dialog(self) -> StartupProblemDialog:
        self.qtbot.waitUntil(lambda: self.recovery.dialog is not None, timeout=WAIT_MS)
        dialog = self.recovery.dialog
        assert dialog is not None
        self.qtbot.waitUntil(dialog.isVisible, timeout=WAIT_MS)
        return dialog

    def click(self, button: Any) -> None:
        self.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    def result(self) -> Any:
        self.qtbot.waitUntil(self.task.done, timeout=WAIT_MS)
        return self.task.result()


@pytest.mark.expected_log_warnings("startup_recovery: (could not open the conversations|restoring .* failed)")
def test_a_garbage_file_shows_the_stores_advice_and_restores_the_newest_backup(
    tmp_path: Path, qloop: Any, qtbot: Any, run: Any
) -> None:
    data_dir = tmp_path / "data"
    _make_database(run, data_dir)
    database = data_dir / DATABASE_FILENAME
    from threadline.store.backups import make_backup

    backup = make_backup(database, "daily")
    database.write_bytes(GARBAGE)
    for companion in ("-wal", "-shm"):
        Path(f"{database}{companion}").unlink(missing_ok=True)

    recovery = Recovery(qloop, qtbot, data_dir)
    dialog = recovery.dialog()
    text = dialog.message.text()
    assert "damaged or is not a Threadline database" in text
    assert "file is not a database" not in text  # the driver's words stay in the log
    assert dialog.restore_button is not None
    from threadline.store.backups import backup_time

    taken = backup_time(backup)
    assert taken is not None
    assert dialog.restore_button.text() == f"Restore Backup from {taken:%Y-%m-%d %H:%M}"

    recovery.click(dialog.folder_button)
    assert recovery.opened_folders == [data_dir]
    assert dialog.isVisible()  # opening the folder is not an answer

    recovery.click(dialog.restore_button)
    engine = recovery.result()
    try:
        titles = [s.title for s in run(engine.sessions.list_sessions(limit=10))]
        assert titles == ["kept in the backup"]
    finally:
        run(engine.aclose())
    kept_aside = [p for p in data_dir.iterdir() if p.name.startswith(f"{DATABASE_FILENAME}.damaged-")]
    assert [p.read_bytes() for p in kept_aside if not p.name.endswith(("-wal", "-shm"))] == [GARBAGE]


@pytest.mark.expected_log_warnings("startup_recovery: (could not open the conversations|restoring .* failed)")
def test_a_schema_from_a_newer_version_offers_no_restore_and_can_be_retried(
    tmp_path: Path, qloop: Any, qtbot: Any, run: Any
) -> None:
    data_dir = tmp_path / "data"
    _make_database(run, data_dir)
    database = data_dir / DATABASE_FILENAME
    from threadline.store.backups import make_backup

    make_backup(database, "daily")  # a backup exists, but restoring it would lose newer work
    current = sqlite3.connect(database)
    (revision,) = current.execute("SELECT version_num FROM alembic_version").fetchone()
    current.execute("UPDATE alembic_version SET version_num = '0099'")
    current.commit()
    current.close()

    recovery = Recovery(qloop, qtbot, data_dir)
    dialog = recovery.dialog()
    text = dialog.message.text()
    assert "written by a newer version of Threadline" in text
    assert "0099" not in text and "schema revision" not in text
    assert dialog.restore_button is None

    # The user installs the newer version... here: puts the revision back, then tries again.
    fixed = sqlite3.connect(database)
    fixed.execute("UPDATE alembic_version SET version_num = ?", (revision,))
    fixed.commit()
    fixed.close()
    recovery.click(dialog.retry_button)
    engine = recovery.result()
    run(engine.aclose())
    assert recovery.recovery.attempts == 2


@pytest.mark.expected_log_warnings("startup_recovery: (could not open the conversations|restoring .* failed)")
def test_quit_gives_no_engine_and_changes_nothing(tmp_path: Path, qloop: Any, qtbot: Any) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / DATABASE_FILENAME).write_bytes(GARBAGE)

    recovery = Recovery(qloop, qtbot, data_dir)
    dialog = recovery.dialog()
    assert dialog.restore_button is None  # no backup exists: none is offered
    recovery.click(dialog.quit_button)
    assert recovery.result() is None
    assert (data_dir / DATABASE_FILENAME).read_bytes() == GARBAGE


@pytest.mark.expected_log_warnings("startup_recovery: (could not open the conversations|restoring .* failed)")
def test_a_damaged_backup_is_never_offered_and_one_damaged_after_the_offer_is_reported(
    tmp_path: Path, qloop: Any, qtbot: Any, run: Any
) -> None:
    data_dir = tmp_path / "data"
    _make_database(run, data_dir)
    database = data_dir / DATABASE_FILENAME
    from threadline.store.backups import make_backup, set_aside_backups

    older = make_backup(database, "daily")
    newest = make_backup(database, "daily")
    newest.write_bytes(GARBAGE)  # the newest backup is damaged too (made before backups were checked)
    database.write_bytes(GARBAGE)

    recovery = Recovery(qloop, qtbot, data_dir)
    first = recovery.dialog()
    assert first.restore_button is not None and first.restore_button.toolTip() == str(older)
    assert [p.name for p in set_aside_backups(database)] == [f"{newest.name}.damaged"]
    older.write_bytes(GARBAGE)  # damaged after it was offered: the restore fails and says so
    recovery.click(first.restore_button)
    qtbot.waitUntil(lambda: recovery.recovery.dialog not in (None, first), timeout=WAIT_MS)
    second = recovery.dialog()
    assert "could not be restored either" in second.message.text()
    assert database.read_bytes() == GARBAGE  # nothing was changed
    recovery.click(second.quit_button)
    assert recovery.result() is None
