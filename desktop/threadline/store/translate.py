"""Turning SQLite, PostgreSQL and SQLAlchemy errors into the store's typed errors.

Every driver error becomes a ``StoreError`` subclass whose ``user_message`` is
ours (the driver's text, which may hold SQL, stays in ``detail`` for the log).
SQLite errors are classified by their result code, PostgreSQL errors by their
SQLSTATE, with the message text as a fallback for drivers that carry neither.
Whether an error is ``transient`` (worth retrying the same write) follows from
its class.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

import sqlalchemy as sa

from threadline.store import backups, damage
from threadline.store.errors import (
    CorruptDatabaseError,
    DatabaseUnreachableError,
    ReadOnlyDatabaseError,
    StorageFullError,
    StoreBusyError,
    StoreError,
    disk_full_message,
)

ORDINAL_CONSTRAINT = "uq_messages_session_ordinal"

# SQLite primary result codes (the low byte of the extended code).
_SQLITE_PERM, _SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY = 3, 5, 6, 8
_SQLITE_IOERR, _SQLITE_CORRUPT, _SQLITE_FULL, _SQLITE_CANTOPEN = 10, 11, 13, 14
_SQLITE_CONSTRAINT, _SQLITE_NOTADB = 19, 26

_BUSY_MARKERS = ("database is locked", "database table is locked", "database is busy")
_CORRUPT_MARKERS = ("file is not a database", "database disk image is malformed", "not a database")
_FULL_MARKERS = ("database or disk is full", "disk full", "no space left on device")
_READONLY_MARKERS = ("attempt to write a readonly database", "read-only", "readonly")

_BUSY_STATES = {"40001", "40P01", "55P03"}  # serialization failure, deadlock, lock not available
_READONLY_STATES = {"25006", "42501"}  # read-only transaction, insufficient privilege
_CORRUPT_STATES = {"XX001", "XX002"}  # data corrupted, index corrupted
_UNREACHABLE_STATES = {"53300", "57P01", "57P02", "57P03"}  # too many connections, shutting down

_UNUSABLE = (
    "The conversation database could not be opened or written. Check that the file and its "
    "folder exist and are readable and writable (or that the database server is running and "
    "the address is right), then try again."
)
_REFUSED = (
    "The database server refused Threadline: check the user name, password and database "
    "name in the database address."
)
FULL_BELOW = 8 * 1024 * 1024
"""Free bytes under which a SQLite I/O error is taken for a full disk.

SQLite says "database or disk is full" only when a write to the database or its WAL
finds no room; when the WAL's shared-memory index cannot grow (a 32 KB step), or the
-wal or -shm file cannot be made, it reports an I/O error. With this little left on
the database's disk that error is the disk being full, and saying so tells the user
what to do."""

_DISK_ERROR = (
    "The disk holding the conversation database reported an error while reading or writing. "
    "Check the disk (or network drive) and try again."
)


def translate_error(
    error: BaseException, *, sqlite_file: Path | None = None, backup_dir: Path | None = None
) -> StoreError | None:
    """The store error a driver or SQLAlchemy error stands for, or ``None`` if it is not one.

    ``sqlite_file`` (and ``backup_dir``, default the folder beside it) let a damaged
    database's error name its newest backup.
    """
    if isinstance(error, StoreError):
        return error
    if not isinstance(error, sa.exc.SQLAlchemyError | sqlite3.Error):
        return None
    original = getattr(error, "orig", None) or error
    detail = str(original).strip()
    if isinstance(original, sqlite3.Error):
        translated = _from_sqlite(original, detail, sqlite_file)
    else:
        translated = _from_server(error, original, detail)
    if translated is None:
        translated = _from_text(error, detail)
    if isinstance(translated, CorruptDatabaseError) and sqlite_file is not None:
        return corrupt_error(detail, sqlite_file, backup_dir)
    return translated


def translate_os_error(error: OSError) -> StoreError:
    """A file-system error met while preparing the database's folder."""
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ReadOnlyDatabaseError(str(error))
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageFullError(str(error))
    return StoreError(str(error), user_message=_UNUSABLE)


def corrupt_error(detail: str, sqlite_file: Path, backup_dir: Path | None = None) -> CorruptDatabaseError:
    """A ``CorruptDatabaseError`` naming the newest healthy backup of ``sqlite_file``, if any.

    The damage is recorded beside the file (``store.damage``), so later commands refuse to
    write into it until it is restored.
    """
    damage.record_damage(sqlite_file, damage.SEEN_BY_READ, detail)
    try:
        newest = backups.newest_healthy_backup(sqlite_file, backup_dir)
    except OSError:
        newest = None
    return CorruptDatabaseError(detail, backup=newest, database=sqlite_file)


def _from_sqlite(error: sqlite3.Error, detail: str, sqlite_file: Path | None) -> StoreError | None:
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return None
    primary = code & 0xFF
    if primary in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return StoreBusyError(detail)
    if primary in (_SQLITE_READONLY, _SQLITE_PERM):
        return ReadOnlyDatabaseError(detail)
    if primary in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return CorruptDatabaseError(detail)
    if primary == _SQLITE_FULL:
        return _full(detail, sqlite_file)
    if primary == _SQLITE_CANTOPEN:
        if sqlite_file is not None and _not_writable(sqlite_file):
            return ReadOnlyDatabaseError(detail)  # e.g. WAL needs its -shm file beside the database
        if _almost_full(sqlite_file):
            return _full(detail, sqlite_file)  # no room for the -wal or -shm file
        return StoreError(detail, user_message=_UNUSABLE)
    if primary == _SQLITE_IOERR:
        if "full" in detail.lower() or _almost_full(sqlite_file):
            return _full(detail, sqlite_file)
        return StoreError(detail, user_message=_DISK_ERROR)
    if primary == _SQLITE_CONSTRAINT and "messages.session_id, messages.ordinal" in detail:
        return StoreBusyError(detail)  # another writer took the ordinal first: retry
    return None


def _free_space(sqlite_file: Path | None) -> int | None:
    """Bytes free to this process on the disk of ``sqlite_file``'s folder (``None``: unknown)."""
    if sqlite_file is None:
        return None
    try:
        return shutil.disk_usage(sqlite_file.parent).free
    except OSError:
        return None


def _almost_full(sqlite_file: Path | None) -> bool:
    free = _free_space(sqlite_file)
    return free is not None and free < FULL_BELOW


def _full(detail: str, sqlite_file: Path | None) -> StorageFullError:
    """A full disk, named with its free space and the database's folder when they are known."""
    free = _free_space(sqlite_file)
    if sqlite_file is None or free is None:
        return StorageFullError(detail)
    return StorageFullError(detail, user_message=disk_full_message(sqlite_file.parent, free))


def _not_writable(sqlite_file: Path) -> bool:
    """Whether an existing database file, or its folder, cannot be written by this process."""
    try:
        return sqlite_file.exists() and not (
            os.access(sqlite_file, os.W_OK) and os.access(sqlite_file.parent, os.W_OK)
        )
    except OSError:
        return False


def _from_server(error: BaseException, original: BaseException, detail: str) -> StoreError | None:
    state = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    if state == "53100":
        return StorageFullError(detail)
    if state in _BUSY_STATES:
        return StoreBusyError(detail)
    if state == "23505" and _constraint(original) == ORDINAL_CONSTRAINT:
        return StoreBusyError(detail)  # another writer took the ordinal first: retry
    if state in _READONLY_STATES:
        return ReadOnlyDatabaseError(detail)
    if state in _CORRUPT_STATES:
        return CorruptDatabaseError(detail)
    if state in _UNREACHABLE_STATES or (state or "").startswith("08"):
        return DatabaseUnreachableError(detail)
    if state in ("28000", "28P01", "3D000"):
        return StoreError(detail, user_message=_REFUSED)
    if getattr(error, "connection_invalidated", False) or isinstance(error, sa.exc.DisconnectionError):
        return DatabaseUnreachableError(detail)
    if state is None and isinstance(error, sa.exc.OperationalError):
        return DatabaseUnreachableError(detail)  # a server driver failing before any statement ran
    return None


def _constraint(original: BaseException) -> str:
    diag = getattr(original, "diag", None)
    name = getattr(diag, "constraint_name", None)
    if name:
        return str(name)
    return ORDINAL_CONSTRAINT if ORDINAL_CONSTRAINT in str(original) else ""


def _from_text(error: BaseException, detail: str) -> StoreError:
    text = detail.lower()
    if any(m in text for m in _FULL_MARKERS):
        return StorageFullError(detail)
    if any(m in text for m in _CORRUPT_MARKERS):
        return CorruptDatabaseError(detail)
    if any(m in text for m in _BUSY_MARKERS):
        return StoreBusyError(detail)
    if any(m in text for m in _READONLY_MARKERS):
        return ReadOnlyDatabaseError(detail)
    if isinstance(error, sa.exc.OperationalError | sqlite3.OperationalError):
        return StoreError(detail, user_message=_UNUSABLE)
    return StoreError(detail)
