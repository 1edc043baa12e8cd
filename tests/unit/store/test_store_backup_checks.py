"""Backups are checked before they count: a damaged copy is set aside, rotation never lets a
healthy backup go for a damaged one, and the damage is recorded for the next process."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command

from threadline.store import backups, db, migrate
from threadline.store.backups import (
    BackupDamagedError,
    daily_backup,
    list_backups,
    newest_healthy_backup,
    quick_check,
    set_aside_backups,
)
from threadline.store.damage import SEEN_BY_BACKUP, clear_damage, record_damage, seen_damage
from threadline.store.errors import CorruptDatabaseError
from threadline.store.repository import Store

TODAY = datetime.now().replace(hour=12, minute=0, second=0, microsecond=0)


def notes_database(path: Path, rows: int = 600) -> Path:
    """A database whose ``notes`` fill many pages (rollback journal: the file is all there is)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
        connection.executemany(
            "INSERT INTO notes VALUES (?)", [(f"note {i} " + "x" * 200,) for i in range(rows)]
        )
    connection.close()
    return path


def damage_a_page_of(path: Path, table: str) -> None:
    """Overwrite the middle one of ``table``'s b-tree pages."""
    connection = sqlite3.connect(path)
    try:
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        pages = sorted(
            int(r[0]) for r in connection.execute("SELECT pageno FROM dbstat WHERE name = ?", (table,))
        )
    finally:
        connection.close()
    assert len(pages) > 10
    with path.open("r+b") as file:
        file.seek((pages[len(pages) // 2] - 1) * page_size)
        file.write(bytes([0xA5]) * page_size)


def week_of_backups(database: Path, days: range) -> list[Path]:
    made = [daily_backup(database, now=TODAY - timedelta(days=d)) for d in days]
    assert all(p is not None for p in made)
    return [p for p in made if p is not None]


@pytest.mark.expected_log_warnings()
def test_a_damaged_copy_is_set_aside_recorded_and_not_counted(tmp_path: Path) -> None:
    database = notes_database(tmp_path / "threadline.db")
    healthy = week_of_backups(database, range(7, 0, -1))
    damage_a_page_of(database, "notes")

    with pytest.raises(BackupDamagedError) as caught:
        daily_backup(database, now=TODAY)

    assert caught.value.aside.name.endswith("-daily.db.damaged") and quick_check(caught.value.aside)
    assert sorted(list_backups(database)) == sorted(healthy)  # the oldest healthy one is kept too
    assert set_aside_backups(database) == [caught.value.aside]
    record = seen_damage(database)
    assert record is not None and record.seen_by == SEEN_BY_BACKUP
    assert newest_healthy_backup(database) == healthy[-1]
    # While the damage is recorded no copy is taken (it would be damaged too).
    assert daily_backup(database, now=TODAY + timedelta(days=1)) is None
    assert sorted(list_backups(database)) == sorted(healthy)


@pytest.mark.expected_log_warnings()
def test_old_healthy_backups_outlive_a_damaged_file_after_a_long_absence(tmp_path: Path) -> None:
    database = notes_database(tmp_path / "threadline.db")
    old = week_of_backups(database, range(20, 17, -1))
    damage_a_page_of(database, "notes")

    with pytest.raises(BackupDamagedError):
        daily_backup(database, now=TODAY)

    assert sorted(list_backups(database)) == sorted(old)  # the window ends at the newest healthy one


def test_an_unchecked_damaged_backup_is_never_the_anchor_nor_offered(tmp_path: Path) -> None:
    database = notes_database(tmp_path / "threadline.db")
    healthy = week_of_backups(database, range(10, 8, -1))
    # The newest backup was damaged before backups were checked.
    bad = backups.make_backup(database, "daily", now=TODAY - timedelta(days=8))
    bad.write_bytes(b"garbage" * 1000)
    backups._known_healthy.clear()
    assert newest_healthy_backup(database) == healthy[-1]
    assert set_aside_backups(database) == [bad.with_name(bad.name + ".damaged")]

    bad = backups.make_backup(database, "daily", now=TODAY - timedelta(days=1))
    bad.write_bytes(b"garbage" * 1000)
    backups._known_healthy.clear()
    clear_damage(database)
    # Rotation around a damaged anchor: it is set aside, and the window ends at the healthy one.
    backups._prune_daily(database, backups.backups_dir(database), 2)
    assert sorted(list_backups(database)) == sorted(healthy)


@pytest.mark.asyncio
async def test_a_damaged_database_is_not_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "threadline.db"
    notes_database(path)
    healthy = daily_backup(path, now=TODAY - timedelta(days=1))
    engine = db.create_engine(Store.sqlite_url(path))
    try:
        migrate.run_alembic_upgrade(engine, "head")
        with engine.begin() as connection:
            command.downgrade(migrate.alembic_config(connection), "base")
            connection.execute(sa.text("PRAGMA journal_mode=DELETE"))
    finally:
        engine.dispose()
    damage_a_page_of(path, "notes")

    with pytest.raises(CorruptDatabaseError) as caught:
        await Store.open(Store.sqlite_url(path))

    assert caught.value.backup == healthy
    assert seen_damage(path) is not None
    assert [p.name.endswith("-rev-base.db.damaged") for p in set_aside_backups(path)] == [True]
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("SELECT count(*) FROM alembic_version").fetchone()[0] == 0
    finally:
        connection.close()


def test_the_record_is_about_one_file(tmp_path: Path) -> None:
    database = notes_database(tmp_path / "threadline.db", rows=1)
    record_damage(database, SEEN_BY_BACKUP, "page 3")
    assert seen_damage(database) is not None
    database.rename(tmp_path / "kept.db")  # moved away: a new, empty database takes its place
    notes_database(database, rows=1)
    assert seen_damage(database) is None
    assert not (tmp_path / "threadline.db.damage-seen").exists()
