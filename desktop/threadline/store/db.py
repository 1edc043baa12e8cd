"""Creating the SQLAlchemy engine and opening read and write transactions.

SQLite is tuned per connection: WAL so readers never wait for the writer,
``synchronous=NORMAL`` (durable at each checkpoint, safe with WAL, far cheaper
than FULL for the streaming writes), foreign keys on (SQLite defaults them off,
and the message cascade relies on them) and a busy timeout so a second app
instance on the same file waits instead of failing at once.

A transaction that will write begins ``BEGIN IMMEDIATE``: it takes the write
lock first, waiting for it under the busy timeout. A plain (deferred) ``BEGIN``
would read first and then ask for the lock mid-transaction, and SQLite answers
that upgrade with "database is locked" at once, without waiting, because
waiting could deadlock two such readers-turned-writers. Reads stay deferred so
they never queue behind a writer.

Every engine repairs text that UTF-8 cannot encode (a lone surrogate) on its way
in, for every statement and JSON value (``encodable``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.pool import StaticPool

from threadline.files.private import create_private_file, private_folder
from threadline.store import encodable

BUSY_TIMEOUT_MS = 5000
WRITE_OPTION = "threadline_write"
"""Execution option on a connection whose next transaction will write (``BEGIN IMMEDIATE``)."""


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


SERVER_TIMEOUTS: dict[str, int] = {
    "connect_timeout": 10,
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 30_000,
}
"""libpq settings that turn a silent network drop into an error within about half a minute.

Without them a connection whose packets are lost (a laptop changing networks, a firewall
forgetting the connection) waits for the operating system's TCP timeouts, many minutes,
and every store call queues behind it. With them a connect gives up after 10 s, an idle
connection is probed after 10 s (then every 5 s, 3 times), and unacknowledged data fails
the connection after 30 s; the error is a lost connection, which the store retries and the
tab shows. A value given in the database address wins."""


def server_timeouts(given: Mapping[str, object]) -> dict[str, int]:
    """``SERVER_TIMEOUTS`` less the ones the database address sets itself."""
    return {key: value for key, value in SERVER_TIMEOUTS.items() if key not in given}


def create_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite files get their parent folder and connection pragmas.

    A new SQLite file is created here, empty and readable by its owner only (an empty
    file is an empty database to SQLite), and a missing folder 0700 (docs/storage.md,
    "Who can read the files"). An existing file keeps its mode."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        # pre_ping: a pooled connection the server dropped (a restart, a terminated backend)
        # is noticed and replaced when checked out, instead of failing the next statement.
        server = sa.create_engine(
            url,
            pool_pre_ping=True,
            connect_args=server_timeouts(parsed.query),
            json_serializer=encodable.json_dumps,
        )
        _repair_text(server)
        return server
    path = sqlite_path(url)
    kwargs: dict[str, Any] = {
        "connect_args": {"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
        "json_serializer": encodable.json_dumps,
    }
    if path is None:
        # One shared connection, or every checkout would see a different empty database.
        kwargs["poolclass"] = StaticPool
    else:  # private from its first byte; SQLite gives -wal and -shm the same mode
        private_folder(path.parent)
        create_private_file(path)
    engine = sa.create_engine(url, **kwargs)
    event.listen(engine, "connect", _configure_sqlite)
    event.listen(engine, "begin", _begin_sqlite)
    _repair_text(engine)
    return engine


def _repair_text(engine: Engine) -> None:
    """Replace what UTF-8 cannot encode in every statement's strings (``encodable``)."""
    event.listen(engine, "before_execute", _note_statement)
    event.listen(engine, "before_cursor_execute", _scrub_parameters, retval=True)


def _note_statement(_connection: sa.Connection, statement: object, *_args: object) -> None:
    encodable.note_statement(statement)


def _scrub_parameters(
    _connection: sa.Connection,
    _cursor: object,
    statement: str,
    parameters: Any,
    _context: object,
    _executemany: bool,
) -> tuple[str, Any]:
    return statement, encodable.scrub_parameters(statement, parameters)


def _configure_sqlite(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    # Take transactions away from the sqlite3 module (which would not BEGIN before DDL)
    # and let SQLAlchemy's "begin" event open them, so migrations are atomic too.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if cursor.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            cursor.execute("PRAGMA journal_mode=WAL")  # a write: only when the file is not WAL yet
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def _begin_sqlite(connection: sa.Connection) -> None:
    writes = connection.get_execution_options().get(WRITE_OPTION, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")


def shrink_memory(connection: sa.Connection) -> None:
    """Free the memory SQLite holds for this connection, its page cache first (SQLite only:
    a server database caches in its own process)."""
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql("PRAGMA shrink_memory")


def mark_writing(connection: sa.Connection) -> sa.Connection:
    """Flag ``connection`` so its transactions begin ``IMMEDIATE`` on SQLite (no effect elsewhere)."""
    return connection.execution_options(**{WRITE_OPTION: True})


@contextmanager
def writing(engine: Engine) -> Iterator[sa.Connection]:
    """A connection inside a transaction that holds the write lock from its start."""
    with engine.connect() as connection:
        mark_writing(connection)
        with connection.begin():
            yield connection
