"""The store's change feed: what other writers changed, read in order, never by a full reload.

Database triggers append one entry to ``change_log`` for every session created,
changed or deleted and every message added, grown, changed or deleted (migration
0006), and every project created, edited or deleted (migration 0009, kind
``project_changed``, the project's id in ``session_id``) and every memory saved, edited
or deleted (migration 0013, kind ``memory_changed``, the memory's id), whoever wrote it. A
``ChangeFeed`` remembers the last ``seq`` it handed out and reads only the entries
after it, together with the current rows of the sessions and messages they name,
in one read transaction:

* **When to read.** SQLite: ``PRAGMA data_version`` on a connection of its own
  changes whenever another connection committed; it is checked every
  ``POLL_SECONDS`` (next to free) and the log is read only when it moved.
  PostgreSQL: a thread ``LISTEN``\\ s on a dedicated connection and wakes the reader
  on every ``NOTIFY`` (the payload is just the ``seq``); it also wakes it every
  ``SLOW_POLL_SECONDS`` in case a notification was lost, and right after it
  reconnects.
* **Nothing missed.** Entries are read by ``seq``, so a lost connection (a server
  restart, a terminated backend) costs nothing: after reconnecting the reader
  continues after the last ``seq`` it saw. PostgreSQL's triggers write entries at
  commit time under one lock, so ``seq`` order is commit order there too.
* **Bounded.** The log keeps its newest 10,000 entries (the triggers trim it). A
  reader that fell further behind gets a batch with ``missed`` set and one log
  line; its caller re-reads what it shows once (``change_counter.changed_sessions``).

Message rows are fetched only for the sessions the caller names (the open ones):
the sidebar needs the session rows, never a streaming reply's text. Project and memory
entries fetch nothing: each list is small and its reader reads it whole
(``ChangeBatch.projects_changed``, ``ChangeBatch.memories_changed``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from threadline.core.messages import Message
from threadline.core.session import SessionInfo
from threadline.store import core_tables, db
from threadline.store.convert import message_from_row, session_from_row
from threadline.store.translate import translate_error

log = logging.getLogger("threadline.store.change_feed")

_log = core_tables.change_log

POLL_SECONDS = 0.05
"""SQLite: how often the change counter is checked (one PRAGMA on an idle connection)."""
SLOW_POLL_SECONDS = 5.0
"""PostgreSQL: the reader reads at least this often even if no notification arrived."""
LISTEN_TICK = 0.25
"""PostgreSQL: how long the listening thread blocks at a time (it notices ``close`` within this)."""
RECONNECT_DELAYS = (0.1, 0.25, 0.5, 1.0, 2.0)
"""Waits between attempts to reconnect the listening connection; the last repeats."""
PAGE = 2000
"""Entries read at a time; a longer backlog is read in several batches."""
ID_CHUNK = 500
CHANNEL = "threadline_changes"
T = TypeVar("T")


class ChangeKind(StrEnum):
    SESSION_CREATED = "session_created"
    SESSION_CHANGED = "session_changed"
    SESSION_DELETED = "session_deleted"
    MESSAGE_ADDED = "message_added"
    MESSAGE_TEXT = "message_text"
    """Only the text changed (a streaming reply grew)."""
    MESSAGE_CHANGED = "message_changed"
    """Status, kind, content, metadata or parent changed (perhaps the text too)."""
    MESSAGE_DELETED = "message_deleted"
    PROJECT_CHANGED = "project_changed"
    """A project was created, edited or deleted; ``session_id`` is the project's id."""
    MEMORY_CHANGED = "memory_changed"
    """A memory was saved, edited or deleted; ``session_id`` is the memory's id."""


NOT_SESSIONS = frozenset({ChangeKind.PROJECT_CHANGED, ChangeKind.MEMORY_CHANGED})
"""Kinds whose ``session_id`` names something else: never looked up among the sessions."""


@dataclass(frozen=True, slots=True)
class Change:
    seq: int
    at: datetime
    kind: ChangeKind
    session_id: str
    message_id: str | None


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message named by a change, as stored when the batch was read."""

    session_id: str
    ordinal: int
    message: Message


@dataclass(frozen=True, slots=True)
class ChangeBatch:
    """Entries after the previous batch, and the rows they name as of one snapshot."""

    changes: tuple[Change, ...]
    sessions: dict[str, SessionInfo | None] = field(default_factory=dict)
    """Every session an entry names: its current row, ``None`` when it no longer exists."""
    messages: tuple[StoredMessage, ...] = ()
    """Messages named by entries of the sessions asked for, in ordinal order (gone ones absent)."""
    missed: bool = False
    """Entries after the previous batch were trimmed before they were read."""
    read_started: float = 0.0
    """``time.monotonic()`` when the snapshot was taken (rows are at least this fresh)."""
    messages_of: frozenset[str] = frozenset()
    """The sessions whose messages were read."""

    @property
    def empty(self) -> bool:
        return not self.changes and not self.missed

    @property
    def projects_changed(self) -> bool:
        """Whether any entry says a project was created, edited or deleted."""
        return any(c.kind is ChangeKind.PROJECT_CHANGED for c in self.changes)

    @property
    def memories_changed(self) -> bool:
        """Whether any entry says a memory was saved, edited or deleted."""
        return any(c.kind is ChangeKind.MEMORY_CHANGED for c in self.changes)


class ChangeFeed:
    """Open with ``await ChangeFeed.open(url)``; ``await next_batch()`` in a loop; ``aclose``."""

    def __init__(
        self,
        url: str,
        engine: sa.Engine,
        executor: ThreadPoolExecutor,
        last_seq: int,
        *,
        poll_interval: float,
        slow_poll: float,
    ) -> None:
        self._url = url
        self._engine = engine
        self._executor = executor
        self.last_seq = last_seq
        """The newest entry handed out (a new feed starts at the newest entry of the log)."""
        self._sqlite = engine.dialect.name == "sqlite"
        self._poll_interval = poll_interval
        self._slow_poll = slow_poll
        self._wake = asyncio.Event()
        self._more = False
        self._data_version: int | None = None
        self._counter_connection: Any = None
        self._listener: _Listener | None = None

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        poll_interval: float = POLL_SECONDS,
        slow_poll: float = SLOW_POLL_SECONDS,
        on_listening: Callable[[bool], None] | None = None,
        since: int | None = None,
    ) -> ChangeFeed:
        """Connect and start after the newest entry: what was written before is not reported.

        With ``since`` (an entry's number read earlier, ``Store.newest_change``) it starts
        after that entry instead: what was written while this feed connected is reported too.

        PostgreSQL: ``on_listening`` is told, on the loop, ``False`` when the listening
        connection is lost (nothing wakes the reader until it is back) and ``True`` once
        it is listening again.
        """
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="threadline-feed")
        loop = asyncio.get_running_loop()

        def connect() -> tuple[sa.Engine, int]:
            engine = db.create_engine(url)
            try:
                with engine.connect() as connection, connection.begin():
                    newest = connection.execute(sa.select(sa.func.max(_log.c.seq))).scalar_one()
                return engine, int(newest or 0) if since is None else since
            except BaseException:
                engine.dispose()
                raise

        connecting = loop.run_in_executor(executor, connect)
        try:
            engine, last = await connecting
        except asyncio.CancelledError:  # closed meanwhile: the engine made on the thread goes too
            connecting.add_done_callback(_dispose_made)
            executor.shutdown(wait=False)
            raise
        except Exception as error:
            executor.shutdown(wait=False)
            translated = translate_error(error)
            if translated is None or translated is error:
                raise
            raise translated from error
        feed = cls(url, engine, executor, last, poll_interval=poll_interval, slow_poll=slow_poll)
        if not feed._sqlite:
            feed._listener = _Listener(url, loop, feed._wake_up, slow_poll, on_listening)
            feed._listener.start()
        return feed

    @property
    def listen_pid(self) -> int | None:
        """PostgreSQL: the server process of the listening connection (tests terminate it)."""
        return self._listener.backend_pid if self._listener else None

    @property
    def reconnects(self) -> int:
        """PostgreSQL: how many times the listening connection was lost and made again."""
        return self._listener.reconnects if self._listener else 0

    async def next_batch(
        self, messages_of: Collection[str] | Callable[[], Collection[str]] = ()
    ) -> ChangeBatch:
        """Wait for the next entries and read them; the rows of ``messages_of``'s messages too
        (a callable is asked at each read: the sessions open then)."""
        while True:
            await self.wait()
            batch = await self.read(messages_of() if callable(messages_of) else messages_of)
            if not batch.empty:
                return batch

    async def wait(self) -> None:
        """Return when something may have been committed (or a read is due anyway)."""
        if self._more:
            self._more = False
            return
        if self._sqlite:
            while True:
                if await self._run(self._version_moved):
                    return
                await asyncio.sleep(self._poll_interval)
        await self._wake.wait()
        self._wake.clear()

    async def read(self, messages_of: Collection[str] = ()) -> ChangeBatch:
        """The entries after ``last_seq`` (at most ``PAGE``), advancing ``last_seq`` past them."""
        batch = await self._run(self._read, self.last_seq, frozenset(messages_of))
        if batch.missed:
            log.info(
                "the change log no longer holds the changes after %s (this window fell behind); "
                "re-reading what it shows",
                self.last_seq,
            )
        if batch.changes:
            self.last_seq = batch.changes[-1].seq
            self._more = len(batch.changes) >= PAGE
        return batch

    async def sessions(self, ids: Collection[str]) -> dict[str, SessionInfo | None]:
        """The current rows of ``ids`` (``None``: gone), for a caller that re-reads a few."""

        def read() -> dict[str, SessionInfo | None]:
            with self._engine.connect() as connection, connection.begin():
                return _sessions(connection, list(ids))

        return await self._run(read)

    async def aclose(self) -> None:
        listener, self._listener = self._listener, None
        loop = asyncio.get_running_loop()
        if listener is not None:
            await loop.run_in_executor(None, listener.stop)
        try:
            await loop.run_in_executor(self._executor, self._close)
        finally:
            self._executor.shutdown(wait=True)

    # -- on the feed's thread -------------------------------------------------------------------

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        """Run ``function`` on the feed's thread; a driver error comes back as the store's typed error."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, function, *args)
        except Exception as error:
            translated = translate_error(error)
            if translated is None or translated is error:
                raise
            raise translated from error

    def _wake_up(self) -> None:
        self._wake.set()

    def _version_moved(self) -> bool:
        """SQLite: whether another connection committed since the last check."""
        if self._counter_connection is None:
            self._counter_connection = self._engine.connect()
        # On the raw connection, outside any transaction: inside one, SQLite would answer
        # from the transaction's snapshot and never see a new commit.
        raw = self._counter_connection.connection.dbapi_connection
        version = int(raw.execute("PRAGMA data_version").fetchone()[0])
        moved = version != self._data_version
        self._data_version = version
        return moved

    def _read(self, last: int, messages_of: frozenset[str]) -> ChangeBatch:
        started = time.monotonic()
        with self._engine.connect() as connection, connection.begin():
            rows = connection.execute(
                sa.select(_log).where(_log.c.seq > last).order_by(_log.c.seq).limit(PAGE)
            ).all()
            oldest = connection.execute(sa.select(sa.func.min(_log.c.seq))).scalar_one()
            missed = oldest is not None and int(oldest) > last + 1
            changes = tuple(change for row in rows if (change := _change(row)) is not None)
            named = (c.session_id for c in changes if c.kind not in NOT_SESSIONS)
            found = _sessions(connection, list(dict.fromkeys(named)))
            wanted = {c.message_id for c in changes if c.message_id and c.session_id in messages_of}
            rows_of_messages = _messages(connection, wanted)
        return ChangeBatch(changes, found, rows_of_messages, missed, started, messages_of)

    def _close(self) -> None:
        try:
            if self._counter_connection is not None:
                self._counter_connection.close()
        finally:
            self._engine.dispose()


def _dispose_made(connected: asyncio.Future[tuple[sa.Engine, int]]) -> None:
    if not connected.cancelled() and connected.exception() is None:
        connected.result()[0].dispose()


def _change(row: sa.Row[Any]) -> Change | None:
    """The entry as a change, or ``None`` for a kind this version does not know.

    A newer Threadline on the same database (a server database shared by two machines, one
    updated first) logs kinds this one has never heard of; they name nothing it shows, so
    they are passed over rather than stopping the feed for every window.
    """
    try:
        kind = ChangeKind(row.kind)
    except ValueError:
        return None
    return Change(row.seq, row.at, kind, row.session_id, row.message_id)


def _sessions(connection: sa.Connection, ids: Collection[str]) -> dict[str, SessionInfo | None]:
    """The rows of ``ids`` in the order given (``None``: gone)."""
    found: dict[str, SessionInfo | None] = dict.fromkeys(ids)
    for chunk in _chunks(sorted(ids)):
        statement = sa.select(core_tables.sessions).where(core_tables.sessions.c.id.in_(chunk))
        for row in connection.execute(statement):
            found[row.id] = session_from_row(row)
    return found


def _messages(connection: sa.Connection, ids: set[str]) -> tuple[StoredMessage, ...]:
    found: list[StoredMessage] = []
    for chunk in _chunks(sorted(ids)):
        statement = sa.select(*core_tables.message_columns()).where(core_tables.messages.c.id.in_(chunk))
        for row in connection.execute(statement):
            found.append(StoredMessage(row.session_id, row.ordinal, message_from_row(row)))
    found.sort(key=lambda m: (m.session_id, m.ordinal))
    return tuple(found)


def _chunks(ids: Sequence[str]) -> list[Sequence[str]]:
    return [ids[i : i + ID_CHUNK] for i in range(0, len(ids), ID_CHUNK)]


def libpq_url(url: str) -> str:
    """The libpq form of a SQLAlchemy PostgreSQL URL (``postgresql+psycopg://`` → ``postgresql://``)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class _Listener:
    """PostgreSQL: a thread that ``LISTEN``\\ s and wakes the reader, reconnecting after a loss."""

    def __init__(
        self,
        url: str,
        loop: asyncio.AbstractEventLoop,
        wake: Callable[[], None],
        slow_poll: float,
        on_listening: Callable[[bool], None] | None = None,
    ) -> None:
        self._conninfo = libpq_url(url)
        self._loop = loop
        self._wake = wake
        self._on_listening = on_listening
        self._slow_poll = slow_poll
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="threadline-feed-listen", daemon=True)
        self.backend_pid: int | None = None
        self.reconnects = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Blocking: ends the thread (within ``LISTEN_TICK``) and closes its connection."""
        self._stopping.set()
        self._thread.join()

    def _signal(self) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody is reading any more
            self._loop.call_soon_threadsafe(self._wake)

    def _tell(self, listening: bool) -> None:
        if self._on_listening is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._on_listening, listening)

    def _run(self) -> None:
        import psycopg

        failures = 0
        while not self._stopping.is_set():
            try:
                timeouts = db.server_timeouts(psycopg.conninfo.conninfo_to_dict(self._conninfo))
                conninfo = psycopg.conninfo.make_conninfo(self._conninfo, **timeouts)
                with psycopg.connect(
                    conninfo, autocommit=True, application_name="threadline-feed"
                ) as connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    self.backend_pid = connection.info.backend_pid
                    if failures:
                        log.info("the change feed is connected again; catching up")
                        self._tell(True)
                    failures = 0
                    self._signal()  # catch up on whatever was committed while not listening
                    self._listen(connection)
            except psycopg.Error as err:
                self.backend_pid = None
                if self._stopping.is_set():
                    return
                delay = RECONNECT_DELAYS[min(failures, len(RECONNECT_DELAYS) - 1)]
                if failures == 0:
                    log.info("the change feed lost its connection (%s); reconnecting", type(err).__name__)
                    self._tell(False)
                failures += 1
                self.reconnects += 1
                self._stopping.wait(delay)

    def _listen(self, connection: Any) -> None:
        last_wake = time.monotonic()
        while not self._stopping.is_set():
            notified = False
            for _ in connection.notifies(timeout=LISTEN_TICK):
                notified = True
                self._signal()
            now = time.monotonic()
            if notified:
                last_wake = now
            elif now - last_wake >= self._slow_poll:
                last_wake = now
                self._signal()
