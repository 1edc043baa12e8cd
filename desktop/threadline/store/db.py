"""Creating the SQLAlchemy engine and turning driver errors into store errors.

SQLite is tuned per connection (DESIGN.md §3): WAL so readers never wait for the
writer, ``synchronous=NORMAL`` (durable at each checkpoint, safe with WAL, far
cheaper than FULL for the streaming writes), foreign keys on (SQLite defaults
them off, and the message cascade relies on them) and a busy timeout so a second
app instance on the same file waits instead of failing at once.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.pool import StaticPool

from threadline.store.errors import CorruptDatabaseError, StorageFullError, StoreError

BUSY_TIMEOUT_MS = 5000

_CORRUPT_MARKERS = ("file is not a database", "database disk image is malformed", "not a database")
_FULL_MARKERS = ("database or disk is full", "disk full", "no space left on device")


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{Path(path).expanduser().resolve()}"


def sqlite_path(url: str) -> Path | None:
    """The file behind a SQLite URL, or ``None`` (another backend, or in memory)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def create_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite files get their parent folder and connection pragmas."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return sa.create_engine(url, pool_pre_ping=True)
    path = sqlite_path(url)
    kwargs: dict[str, Any] = {"connect_args": {"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000}}
    if path is None:
        # One shared connection, or every checkout would see a different empty database.
        kwargs["poolclass"] = StaticPool
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, **kwargs)
    event.listen(engine, "connect", _configure_sqlite)
    event.listen(engine, "begin", _begin_sqlite)
    return engine


def _configure_sqlite(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    # Take transactions away from the sqlite3 module (which would not BEGIN before DDL)
    # and let SQLAlchemy's "begin" event open them, so migrations are atomic too.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()


def _begin_sqlite(connection: sa.Connection) -> None:
    connection.exec_driver_sql("BEGIN")


def translate_error(error: BaseException) -> StoreError | None:
    """The store error a driver or SQLAlchemy error stands for, or ``None`` if it is not one."""
    if isinstance(error, StoreError):
        return error
    if not isinstance(error, sa.exc.SQLAlchemyError | sqlite3.Error):
        return None
    original = getattr(error, "orig", None) or error
    text = str(original).lower()
    sqlstate = getattr(original, "sqlstate", None)
    if any(m in text for m in _FULL_MARKERS) or sqlstate in ("53100", "53200"):
        return StorageFullError(str(original))
    if any(m in text for m in _CORRUPT_MARKERS):
        return CorruptDatabaseError(str(original))
    if isinstance(error, sa.exc.OperationalError | sqlite3.OperationalError):
        return StoreError(
            str(original),
            user_message=(
                "The conversation database could not be reached or written. "
                "Check that its folder is writable (or that the server is running) and try again."
            ),
        )
    return StoreError(str(original))
