"""Checking a database for damage: SQLite's own checks, or a read of every table on a server.

On SQLite, ``PRAGMA integrity_check`` walks every b-tree page (tables and
indexes), and the FTS5 ``integrity-check`` command compares the search index
with the messages it indexes. Both are slow on a big file (seconds for
hundreds of megabytes), so they run on demand (``threadline --self-test``, a
"Check database" action), never at every start. A PostgreSQL server looks
after its own pages; reading one row of each table proves the tables are there
and readable by this user.

The SQLite checks use only the standard library, so they work on a file the
store cannot open.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlalchemy as sa

MAX_PROBLEMS = 20
FTS_TABLE = "messages_fts"


def check_sqlite(connection: sqlite3.Connection) -> list[str]:
    """The problems SQLite finds in the database behind ``connection`` (``[]`` when healthy)."""
    try:
        rows = [str(r[0]) for r in connection.execute(f"PRAGMA integrity_check({MAX_PROBLEMS})")]
    except sqlite3.Error as error:
        return [f"integrity check could not run: {error}"]
    problems = [] if rows == ["ok"] else rows
    try:
        has_fts = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (FTS_TABLE,)
        ).fetchone()
        if has_fts:
            # A command, not a row: it raises when the index is inconsistent or (rank 1)
            # disagrees with the messages it indexes.
            connection.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES ('integrity-check', 1)")
    except sqlite3.Error as error:
        problems.append(f"search index does not match the messages: {error}")
    return problems


def check_sqlite_file(path: Path) -> list[str]:
    """``check_sqlite`` on a file, through a connection of its own (waits up to 5 s for a writer)."""
    if not Path(path).is_file():
        return [f"{path} does not exist"]
    try:
        connection = sqlite3.connect(path, timeout=5.0, isolation_level=None)
    except sqlite3.Error as error:
        return [f"cannot open: {error}"]
    try:
        return check_sqlite(connection)
    finally:
        connection.close()


def check_server_tables(connection: sa.Connection) -> list[str]:
    """One row read from every table of the schema (a server checks its own pages)."""
    import sqlalchemy as sa

    from threadline.store.tables import metadata

    problems = []
    for table in metadata.sorted_tables:
        try:
            with connection.begin_nested():
                connection.execute(sa.select(sa.literal(1)).select_from(table).limit(1)).all()
        except sa.exc.SQLAlchemyError as error:
            problems.append(f"table {table.name}: {getattr(error, 'orig', None) or error}")
    return problems


def check_database(url: str) -> list[str]:
    """The problems in the database at ``url`` (``[]`` when healthy); for ``--self-test``.

    A SQLite file is checked directly (a missing file has nothing to check); a
    server database through an opened ``Store``. Call it outside a running event loop.
    """
    from threadline.store.db import sqlite_path

    path = sqlite_path(url)
    if path is not None:
        return check_sqlite_file(path) if path.exists() else []
    import asyncio

    from threadline.store.repository import Store

    async def check() -> list[str]:
        store = await Store.open(url)
        try:
            return await store.check_integrity()
        finally:
            await store.close()

    return asyncio.run(check())
