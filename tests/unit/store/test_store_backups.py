"""Backups beside the database: daily copies (bounded), listing, restoring, and the store's use of them."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from threadline.core.messages import Message
from threadline.store import backups
from threadline.store.backups import (
    BackupUnusableError,
    backups_dir,
    daily_backup,
    list_backups,
    newest_backup,
    restore_backup,
)
from threadline.store.errors import CorruptDatabaseError
from threadline.store.repository import Store

REPO = Path(__file__).resolve().parents[3]


def _database(path: Path, note: str = "precious") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE IF NOT EXISTS notes (text TEXT)")
        connection.execute("INSERT INTO notes VALUES (?)", (note,))
    connection.close()
    return path


def _notes(path: Path) -> list[str]:
    connection = sqlite3.connect(path)
    try:
        return [r[0] for r in connection.execute("SELECT text FROM notes ORDER BY rowid")]
    finally:
        connection.close()


def test_backups_live_beside_the_database(tmp_path: Path) -> None:
    assert backups_dir(tmp_path / "data" / "threadline.db") == tmp_path / "data" / "backups"


def test_one_daily_backup_per_day_holding_the_wal_content(tmp_path: Path) -> None:
    db = _database(tmp_path / "threadline.db")
    keeper = sqlite3.connect(db)  # an open connection keeps the WAL file (and its content) around
    keeper.execute("INSERT INTO notes VALUES ('only in the WAL')")
    keeper.commit()
    try:
        assert Path(f"{db}-wal").exists()
        first = daily_backup(db)
        assert first is not None and first.parent == tmp_path / "backups"
        assert first.name.startswith("threadline-") and first.name.endswith("-daily.db")
        assert daily_backup(db) is None  # already done today
    finally:
        keeper.close()
    assert _notes(first) == ["precious", "only in the WAL"]
    assert not Path(f"{first}-wal").exists()  # a self-contained file
    assert list_backups(db) == [first] and newest_backup(db) == first


def test_daily_backups_are_bounded_in_age_and_number(tmp_path: Path) -> None:
    db = _database(tmp_path / "threadline.db")
    today = datetime(2026, 5, 20, 9, 0)
    made = []
    for days_ago in range(12, 0, -1):
        copy = daily_backup(db, keep_days=7, now=today - timedelta(days=days_ago))
        assert copy is not None
        made.append(copy)
    upgrade = backups.make_backup(db, "rev-0002", now=today - timedelta(days=30))
    latest = daily_backup(db, keep_days=7, now=today)
    daily = [p for p in list_backups(db) if p.name.endswith("-daily.db")]
    assert latest is not None and latest in daily
    assert len(daily) == 7
    kept_days = sorted(backups.backup_time(p).date() for p in daily)  # type: ignore[union-attr]
    assert kept_days[0] == (today - timedelta(days=6)).date()
    assert upgrade.exists()  # upgrade backups are pruned by their own rule


def test_other_files_in_the_folder_are_left_alone(tmp_path: Path) -> None:
    db = _database(tmp_path / "threadline.db")
    folder = backups_dir(db)
    folder.mkdir()
    mine = folder / "my-notes.txt"
    other = folder / "otherdb-20200101-000000-daily.db"
    mine.write_text("keep")
    other.write_text("keep")
    for days_ago in range(10, -1, -1):
        daily_backup(db, keep_days=2, now=datetime.now() - timedelta(days=days_ago))
    assert mine.exists() and other.exists()
    backups = list_backups(db)
    assert backups
    assert all(p.name.startswith("threadline-") for p in backups)


def test_restore_moves_the_damaged_file_aside_and_copies_the_backup_in(tmp_path: Path) -> None:
    db = _database(tmp_path / "threadline.db", "from the backup")
    copy = daily_backup(db)
    assert copy is not None
    damaged = b"not a database any more" * 100
    db.write_bytes(damaged)
    Path(f"{db}-wal").write_bytes(b"stale wal")

    aside = restore_backup(copy, db)

    assert aside is not None and aside.name.startswith("threadline.db.damaged-")
    assert aside.read_bytes() == damaged  # never deleted
    assert Path(f"{aside}-wal").read_bytes() == b"stale wal"  # moved with its file
    assert not Path(f"{db}-wal").exists()
    assert _notes(db) == ["from the backup"]
    assert copy.exists()  # the backup stays a backup


def test_a_damaged_backup_is_refused_and_nothing_moves(tmp_path: Path) -> None:
    db = _database(tmp_path / "threadline.db")
    bad = backups_dir(db) / "threadline-20260101-000000-daily.db"
    bad.parent.mkdir()
    bad.write_bytes(b"garbage" * 1000)
    with pytest.raises(BackupUnusableError):
        restore_backup(bad, db)
    assert _notes(db) == ["precious"]


def test_the_backups_module_imports_nothing_heavy() -> None:
    script = textwrap.dedent(
        """
        import sys
        import threadline.store.backups, threadline.store.errors
        print(sorted(m for m in ("sqlalchemy", "sqlmodel", "alembic") if m in sys.modules))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "desktop")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


async def _wait_for_backup(db: Path) -> Path:
    for _ in range(600):
        found = newest_backup(db)
        if found is not None:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError("no daily backup appeared")


@pytest.mark.asyncio
async def test_the_store_takes_the_daily_backup_of_a_database_with_content(tmp_path: Path) -> None:
    db = tmp_path / "data" / "threadline.db"
    store = await Store.open(Store.sqlite_url(db))
    info = await store.create_session(title="worth keeping")
    await store.append_message(info.id, Message.prompt("remember me"))
    await store.close()
    assert newest_backup(db) is None  # an empty database at open: nothing to back up

    store = await Store.open(Store.sqlite_url(db))
    await store.close()  # close waits for the backup queued on the store's thread
    copy = await _wait_for_backup(db)
    with sqlite3.connect(copy) as connection:
        assert connection.execute("SELECT title FROM sessions").fetchall() == [("worth keeping",)]
    connection.close()

    store = await Store.open(Store.sqlite_url(db))
    await store.close()
    assert list_backups(db) == [copy]  # one per day


@pytest.mark.expected_log_warnings("daily backup")
@pytest.mark.asyncio
async def test_a_failing_backup_does_not_fail_the_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "threadline.db"
    store = await Store.open(Store.sqlite_url(db))
    await store.create_session(title="x")
    await store.close()
    backups_dir(db).write_text("a file where the folder should be")

    store = await Store.open(Store.sqlite_url(db))
    try:
        assert len(await store.list_sessions()) == 1
    finally:
        await store.close()
    assert any("daily backup" in r.getMessage() for r in caplog.records if r.levelname == "WARNING")


@pytest.mark.asyncio
async def test_a_damaged_database_at_open_names_the_backup_to_restore(tmp_path: Path) -> None:
    db = tmp_path / "threadline.db"
    store = await Store.open(Store.sqlite_url(db))
    await store.create_session(title="x")
    await store.close()
    copy = daily_backup(db)
    assert copy is not None
    db.write_bytes(b"\0" * 8192)

    with pytest.raises(CorruptDatabaseError) as caught:
        await Store.open(Store.sqlite_url(db))

    assert caught.value.backup == copy
    assert f"in {copy.parent}" in caught.value.user_message
    restore_backup(copy, db)
    store = await Store.open(Store.sqlite_url(db))
    try:
        assert [s.title for s in await store.list_sessions()] == ["x"]
    finally:
        await store.close()
