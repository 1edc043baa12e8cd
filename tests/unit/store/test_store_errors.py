"""Every driver error becomes a typed store error whose message is ours, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from threadline.core.messages import Message
from threadline.store.errors import (
    CorruptDatabaseError,
    DatabaseUnreachableError,
    ReadOnlyDatabaseError,
    StorageFullError,
    StoreBusyError,
    StoreError,
)
from threadline.store.repository import Store
from threadline.store.translate import translate_error

DRIVER_WORDS = ("sqlite", "INSERT", "UPDATE", "SELECT", "psycopg", "sqlstate", "readonly database", "Errno")


def _sqlite_error(code: int, text: str) -> sqlite3.Error:
    error = sqlite3.OperationalError(text)
    error.sqlite_errorcode = code
    return error


@pytest.mark.parametrize(
    ("code", "text", "expected", "transient"),
    [
        (5, "database is locked", StoreBusyError, True),
        (6, "database table is locked", StoreBusyError, True),
        (8, "attempt to write a readonly database", ReadOnlyDatabaseError, False),
        (11, "database disk image is malformed", CorruptDatabaseError, False),
        (26, "file is not a database", CorruptDatabaseError, False),
        (13, "database or disk is full", StorageFullError, False),
        (10 | (4 << 8), "disk I/O error", StoreError, False),
        (14, "unable to open database file", StoreError, False),
    ],
)
def test_sqlite_errors_by_result_code(code: int, text: str, expected: type, transient: bool) -> None:
    wrapped = sa.exc.OperationalError("INSERT INTO messages VALUES (?)", {}, _sqlite_error(code, text))
    translated = translate_error(wrapped)
    assert type(translated) is expected
    assert translated is not None and translated.transient is transient
    assert translated.detail == text
    assert not any(word.lower() in translated.user_message.lower() for word in DRIVER_WORDS)


class _FakeDiag:
    constraint_name = "uq_messages_session_ordinal"


class _ServerError(Exception):
    def __init__(self, sqlstate: str | None, text: str = "ERROR: something at SELECT 1") -> None:
        super().__init__(text)
        self.sqlstate = sqlstate
        self.diag = _FakeDiag()


@pytest.mark.parametrize(
    ("sqlstate", "expected", "transient"),
    [
        ("40001", StoreBusyError, True),
        ("40P01", StoreBusyError, True),
        ("23505", StoreBusyError, True),
        ("25006", ReadOnlyDatabaseError, False),
        ("42501", ReadOnlyDatabaseError, False),
        ("53100", StorageFullError, False),
        ("XX001", CorruptDatabaseError, False),
        ("08006", DatabaseUnreachableError, True),
        ("57P01", DatabaseUnreachableError, True),
        (None, DatabaseUnreachableError, True),
        ("28P01", StoreError, False),
    ],
)
def test_server_errors_by_sqlstate(sqlstate: str | None, expected: type, transient: bool) -> None:
    wrapped = sa.exc.OperationalError("SELECT 1", {}, _ServerError(sqlstate))
    translated = translate_error(wrapped)
    assert type(translated) is expected
    assert translated is not None and translated.transient is transient
    assert "SELECT" not in translated.user_message


def test_a_unique_violation_other_than_the_ordinal_is_not_retried() -> None:
    original = _ServerError("23505", "duplicate key value violates unique constraint messages_pkey")
    original.diag = type("D", (), {"constraint_name": "messages_pkey"})()
    translated = translate_error(sa.exc.IntegrityError("INSERT", {}, original))
    assert type(translated) is StoreError and not translated.transient


def test_a_damaged_database_names_its_newest_backup(tmp_path: Path) -> None:
    database = tmp_path / "threadline.db"
    database.write_bytes(b"x")
    error = sa.exc.DatabaseError("SELECT", {}, _sqlite_error(26, "file is not a database"))

    without = translate_error(error, sqlite_file=database)
    assert isinstance(without, CorruptDatabaseError) and without.backup is None
    assert "backups" not in without.user_message  # no folder to send anyone to
    assert "no backup" in without.user_message

    (tmp_path / "backups").mkdir()
    older = tmp_path / "backups" / "threadline-20260420-080000-daily.db"
    newer = tmp_path / "backups" / "threadline-20260421-080000-daily.db"
    older.write_bytes(b"a")
    newer.write_bytes(b"b")
    os.utime(older, (1_000, 1_000))
    with_backup = translate_error(error, sqlite_file=database)
    assert isinstance(with_backup, CorruptDatabaseError) and with_backup.backup == newer
    assert "Restore the copy from 2026-04-21 08:00" in with_backup.user_message
    assert str(tmp_path / "backups") in with_backup.user_message


@pytest.mark.asyncio
async def test_a_read_only_file_opens_and_a_new_session_says_read_only(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    store = await Store.open(Store.sqlite_url(path))
    info = await store.create_session(title="kept")
    await store.close()

    read_only = await Store.open(f"sqlite:///file:{path}?mode=ro&uri=true")
    try:
        assert [s.id for s in await read_only.list_sessions()] == [info.id]
        with pytest.raises(ReadOnlyDatabaseError) as caught:
            await read_only.create_session(title="new")
        assert "cannot be changed" in caught.value.user_message
        assert not caught.value.transient
    finally:
        await read_only.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files anyway")
@pytest.mark.asyncio
async def test_a_read_only_file_by_permissions(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    store = await Store.open(Store.sqlite_url(path))
    await store.create_session(title="kept")
    await store.close()
    path.chmod(0o444)
    try:
        store = await Store.open(Store.sqlite_url(path))
        try:
            with pytest.raises(ReadOnlyDatabaseError):
                await store.create_session(title="new")
        finally:
            await store.close()
    finally:
        path.chmod(0o644)


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_a_read_only_postgres_database(postgres_server: object) -> None:
    url = postgres_server.create_database()  # type: ignore[attr-defined]
    try:
        store = await Store.open(url)
        info = await store.create_session(title="before")
        name = url.rsplit("/", 1)[1]
        admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.exec_driver_sql(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
        admin.dispose()
        store._engine.dispose()  # new connections pick the setting up
        try:
            assert await store.get_session(info.id) is not None
            with pytest.raises(ReadOnlyDatabaseError) as caught:
                await store.append_message(info.id, Message.prompt("not saved"))
            assert "INSERT" not in caught.value.user_message
            assert "read-only transaction" in caught.value.detail
        finally:
            await store.close()
    finally:
        postgres_server.drop_database(url)  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_a_database_folder_that_cannot_be_made_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    with pytest.raises(StoreError) as caught:
        await Store.open(Store.sqlite_url(blocker / "data" / "threadline.db"))
    assert "could not be opened or written" in caught.value.user_message
    assert "Errno" not in caught.value.user_message
