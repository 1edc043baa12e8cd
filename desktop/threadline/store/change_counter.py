"""A cheap "did anything commit?" check of the database, and a re-read of what changed.

Another process on the same database (``threadline ask``, a second window) writes
without telling this one. Until a change feed exists, a window learns about such
writes by polling a counter that costs next to nothing:

* SQLite: ``PRAGMA data_version`` on a connection of its own. The value changes
  whenever a connection *other than this one* committed, which includes this
  process's store; the caller compares what it re-reads with what it knows, so
  its own writes produce no events.
* PostgreSQL: the upper bound of the current transaction snapshot
  (``txid_snapshot_xmax``), which moves whenever any transaction of the cluster
  was given an id, i.e. wrote something. Writes to other databases of the same
  cluster cause a needless (cheap) re-read, never a missed one.

Only when the counter moved does ``changed_sessions`` run, and it reads only the
sessions whose activity time is at or after a watermark (one index range per
``archived``/``pinned`` pair of ``ix_sessions_list``) plus the sessions the caller
already shows, by primary key: a rename or pin does not move ``updated_at``, so
those rows are compared by the caller. Never a full reload.

The connection and its queries run on a thread of their own, so polling never
queues behind the store's writes and never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, TypeVar

import sqlalchemy as sa

from threadline.core.session import SessionInfo
from threadline.store import db
from threadline.store.coltypes import UTCDateTime
from threadline.store.convert import session_from_row
from threadline.store.core_tables import sessions

log = logging.getLogger("threadline.store.change_counter")

ID_CHUNK = 500
"""Primary keys per ``IN (…)`` (well under SQLite's limit of bound parameters)."""
T = TypeVar("T")
PG_COUNTER = "SELECT txid_snapshot_xmax(txid_current_snapshot())"


class ChangeCounter:
    """Create with ``await ChangeCounter.open(url)``; ``close`` when done."""

    def __init__(self, engine: sa.Engine, connection: sa.Connection, executor: ThreadPoolExecutor) -> None:
        self._engine = engine
        self._connection = connection
        self._executor = executor
        self._sqlite = engine.dialect.name == "sqlite"

    @classmethod
    async def open(cls, url: str) -> ChangeCounter:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="threadline-changes")
        loop = asyncio.get_running_loop()

        def connect() -> tuple[sa.Engine, sa.Connection]:
            engine = db.create_engine(url)
            try:
                return engine, engine.connect()
            except BaseException:
                engine.dispose()
                raise

        try:
            engine, connection = await loop.run_in_executor(executor, connect)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(engine, connection, executor)

    async def counter(self) -> int:
        """A number that differs from the last one when something may have been committed."""
        return await self._run(self._counter)

    async def latest_activity(self) -> datetime | None:
        """The newest ``updated_at`` of any session (the first watermark)."""
        return await self._run(self._latest_activity)

    async def changed_sessions(self, since: datetime | None, known: Collection[str]) -> list[SessionInfo]:
        """Sessions active at or after ``since``, and the current rows of the ``known`` ids.

        A known id missing from the answer was deleted.
        """
        return await self._run(self._changed_sessions, since, tuple(known))

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._executor, self._close)
        finally:
            self._executor.shutdown(wait=True)

    # -- on the counter's thread -------------------------------------------------------------

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, function, *args)

    def _counter(self) -> int:
        if self._sqlite:
            # On the raw connection, outside any transaction: inside one, SQLite would
            # answer from the transaction's snapshot and never see a new commit.
            raw = self._connection.connection.dbapi_connection
            assert raw is not None
            value = raw.execute("PRAGMA data_version").fetchone()[0]
            return int(value)
        with self._connection.begin():
            return int(self._connection.exec_driver_sql(PG_COUNTER).scalar_one())

    def _latest_activity(self) -> datetime | None:
        # Typed as the column, so SQLite's text comes back as an aware datetime.
        newest = sa.type_coerce(sa.func.max(sessions.c.updated_at), UTCDateTime())
        with self._engine.connect() as connection, connection.begin():
            value: datetime | None = connection.execute(sa.select(newest)).scalar_one()
            return value

    def _changed_sessions(self, since: datetime | None, known: tuple[str, ...]) -> list[SessionInfo]:
        found: dict[str, SessionInfo] = {}
        # A pooled connection, never the counter's: that one must stay outside any transaction.
        with self._engine.connect() as connection, connection.begin():
            if since is not None:
                # The equalities on the index's leading columns keep this a few index ranges.
                statement = sa.select(sessions).where(
                    sessions.c.archived.in_([False, True]),
                    sessions.c.pinned.in_([False, True]),
                    sessions.c.updated_at >= since,
                )
                for row in connection.execute(statement):
                    found[row.id] = session_from_row(row)
            for start in range(0, len(known), ID_CHUNK):
                chunk = known[start : start + ID_CHUNK]
                for row in connection.execute(sa.select(sessions).where(sessions.c.id.in_(chunk))):
                    found[row.id] = session_from_row(row)
        return list(found.values())

    def _close(self) -> None:
        try:
            self._connection.close()
        finally:
            self._engine.dispose()
