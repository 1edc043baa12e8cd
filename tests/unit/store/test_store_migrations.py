"""Schema migrations: empty to head, the fast path, backups, refusal of newer schemas, bad files."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event

from threadline.core.messages import Message
from threadline.store import db, migrate
from threadline.store.errors import CorruptDatabaseError, SchemaTooNewError, StorageFullError, StoreError
from threadline.store.repository import Store
from threadline.store.tables import metadata

REPO = Path(__file__).resolve().parents[3]


def _revisions(url: str) -> list[str]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [r[0] for r in conn.execute(sa.text("SELECT version_num FROM alembic_version"))]
    finally:
        engine.dispose()


def _sqlite_file(url: str) -> Path:
    path = db.sqlite_path(url)
    assert path is not None
    return path


@pytest.mark.asyncio
async def test_empty_database_is_migrated_to_head(store_url: str) -> None:
    store = await Store.open(store_url)
    await store.close()
    assert _revisions(store_url) == [migrate.HEAD_REVISION]
    engine = sa.create_engine(store_url)
    try:
        names = set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert {"sessions", "messages", "agents", "providers", "settings", "ui_state"} <= names
    if store_url.startswith("sqlite"):
        assert "messages_fts" in names
        with sqlite3.connect(_sqlite_file(store_url)) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
        fts = {"messages_fts_insert", "messages_fts_delete", "messages_fts_update"}
        fts |= {"reasoning_fts_insert", "reasoning_fts_delete", "reasoning_fts_update"}  # 0007: thinking
        assert {t for t in triggers if not t.startswith("change_log_")} == fts
        assert {"change_log_session_update", "change_log_message_update", "change_log_trim"} <= triggers


@pytest.mark.asyncio
async def test_tables_match_the_migrations(store_url: str) -> None:
    """The SQLModel classes and the migration describe the same schema (autogenerate finds nothing)."""
    await (await Store.open(store_url)).close()
    engine = sa.create_engine(store_url)

    def include(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
        # Full-text machinery is backend-specific and deliberately not in the metadata.
        return not (name or "").startswith(
            ("messages_fts", "reasoning_fts", "ix_messages_fts", "search_vector")
        )

    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"include_object": include, "compare_type": True})
            diffs = compare_metadata(context, metadata)
    finally:
        engine.dispose()
    assert diffs == []


def test_known_revisions_match_the_scripts() -> None:
    scripts = ScriptDirectory.from_config(migrate.alembic_config())
    assert {s.revision for s in scripts.walk_revisions()} == set(migrate.KNOWN_REVISIONS)
    assert scripts.get_heads() == [migrate.HEAD_REVISION]


@pytest.mark.asyncio
async def test_up_to_date_database_skips_alembic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = Store.sqlite_url(tmp_path / "t.sqlite3")
    await (await Store.open(url)).close()

    def forbidden(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("Alembic must not run on an up-to-date database")

    monkeypatch.setattr(migrate, "run_alembic_upgrade", forbidden)
    store = await Store.open(url)
    assert store.backup_path is None
    await store.close()

    assert not (tmp_path / "backups").exists()


def test_opening_an_up_to_date_database_does_not_import_alembic(tmp_path: Path) -> None:
    """Alembic costs ~0.4 s to import; a current database must open without it (docs/design.md §9)."""
    url = Store.sqlite_url(tmp_path / "t.sqlite3")

    async def create() -> None:
        await (await Store.open(url)).close()

    asyncio.run(create())
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        from threadline.store.repository import Store
        async def main():
            await (await Store.open({url!r})).close()
        asyncio.run(main())
        print("alembic" in sys.modules)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "desktop")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


async def _database_at_base(path: Path) -> None:
    """A database that an older app left at the base revision, with something to preserve."""
    url = Store.sqlite_url(path)
    engine = db.create_engine(url)
    try:
        migrate.run_alembic_upgrade(engine, "head")
        with engine.begin() as conn:
            command.downgrade(migrate.alembic_config(conn), "base")
            conn.execute(sa.text("CREATE TABLE old_marker (note TEXT)"))
            conn.execute(sa.text("INSERT INTO old_marker VALUES ('precious')"))
    finally:
        engine.dispose()
    assert _revisions(url) == []


@pytest.mark.asyncio
async def test_backup_is_written_before_an_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "data" / "threadline.sqlite3"
    path.parent.mkdir()
    await _database_at_base(path)

    store = await Store.open(Store.sqlite_url(path))
    try:
        backup = store.backup_path
        info = await store.create_session(title="after upgrade")
        await store.append_message(info.id, Message.prompt("hello"))
    finally:
        await store.close()

    assert backup is not None
    assert backup.parent == path.parent / "backups"
    assert backup.name.startswith("threadline-") and backup.name.endswith("-rev-base.sqlite3")
    with sqlite3.connect(backup) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert conn.execute("SELECT note FROM old_marker").fetchall() == [("precious",)]
    assert "sessions" not in tables  # taken before the upgrade
    assert _revisions(Store.sqlite_url(path)) == [migrate.HEAD_REVISION]


@pytest.mark.asyncio
async def test_backup_dir_can_be_chosen(tmp_path: Path) -> None:
    path = tmp_path / "threadline.sqlite3"
    await _database_at_base(path)
    store = await Store.open(Store.sqlite_url(path), backup_dir=tmp_path / "elsewhere")
    await store.close()
    assert store.backup_path is not None
    assert store.backup_path.parent == tmp_path / "elsewhere"
    assert store.backup_path.exists()


@pytest.mark.asyncio
async def test_a_fresh_database_needs_no_backup(tmp_path: Path) -> None:
    store = await Store.open(Store.sqlite_url(tmp_path / "new" / "t.sqlite3"))
    await store.close()
    assert store.backup_path is None
    assert not (tmp_path / "new" / "backups").exists()


@pytest.mark.asyncio
async def test_newer_schema_is_refused_untouched(store_url: str) -> None:
    await (await Store.open(store_url)).close()
    engine = sa.create_engine(store_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = '9999_from_the_future'"))
    finally:
        engine.dispose()

    with pytest.raises(SchemaTooNewError) as caught:
        await Store.open(store_url)

    assert caught.value.revision == "9999_from_the_future"
    assert "This database was written by a newer version of Threadline" in caught.value.user_message
    assert "Update Threadline" in caught.value.user_message
    assert isinstance(caught.value, StoreError)
    assert _revisions(store_url) == ["9999_from_the_future"]


@pytest.mark.asyncio
async def test_a_file_that_is_not_a_database_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "threadline.sqlite3"
    garbage = b"this is my shopping list, not a database\n" * 200
    path.write_bytes(garbage)

    with pytest.raises(CorruptDatabaseError) as caught:
        await Store.open(Store.sqlite_url(path))

    assert "damaged or is not a Threadline database" in caught.value.user_message
    assert path.read_bytes() == garbage


@pytest.mark.asyncio
async def test_disk_full_is_reported(tmp_path: Path) -> None:
    url = Store.sqlite_url(tmp_path / "t.sqlite3")
    store = await Store.open(url)
    try:
        info = await store.create_session()
        engine = store._engine

        def tiny_disk(dbapi_connection: sqlite3.Connection, _record: object) -> None:
            pages = dbapi_connection.execute("PRAGMA page_count").fetchone()[0]
            dbapi_connection.execute(f"PRAGMA max_page_count = {pages + 2}")

        event.listen(engine, "connect", tiny_disk)
        engine.dispose()
        with pytest.raises(StorageFullError) as caught:
            await store.append_message(info.id, Message.prompt("x" * 200_000))
        assert "full" in caught.value.user_message
        # Nothing half-written: the append was one transaction.
        event.remove(engine, "connect", tiny_disk)
        engine.dispose()
        assert await store.message_count(info.id) == 0
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_only_the_newest_backups_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "data" / "threadline.sqlite3"
    path.parent.mkdir()
    backups = path.parent / "backups"
    backups.mkdir()
    old = []
    for day in range(1, 7):  # six older backups of this database, oldest first
        copy = backups / f"threadline-202601{day:02d}-120000-rev-base.sqlite3"
        copy.write_bytes(b"old")
        os.utime(copy, (1_700_000_000 + day, 1_700_000_000 + day))
        old.append(copy)
    other = backups / "otherdb-20260101-120000-rev-base.sqlite3"  # another database's: untouched
    other.write_bytes(b"keep")
    await _database_at_base(path)

    store = await Store.open(Store.sqlite_url(path))
    await store.close()

    kept = sorted(p.name for p in backups.glob("threadline-*"))
    assert len(kept) == migrate.KEPT_BACKUPS
    assert store.backup_path is not None and store.backup_path.name in kept
    assert [p.exists() for p in old] == [False, False, True, True, True, True]
    assert other.exists()
