"""The async repository the engine talks to: ``Store``.

Every database call runs on one dedicated worker thread. One thread serialises
the writes (SQLite has a single writer anyway, and ordering of "append, then
update text" must hold), and the asyncio/Qt thread only ever awaits, so it
never blocks on disk or network. Underneath is plain synchronous SQLAlchemy,
one transaction per call, in the ``ops_*``, ``core_reads``, ``key_values``,
``leases`` and ``search`` modules. What a start, a turn and a search run is
written in SQLAlchemy Core on the ``core_tables`` clauses; the rest (saving
projects, agents and providers, import, subtree delete) uses the SQLModel classes,
and ``sqlmodel`` with SQLAlchemy's ORM and pydantic (megabytes and a noticeable import
time) is imported
by the first such call, not by every process (see docs/performance.md).

Each call is either a read (a deferred transaction) or a write, whose
transaction takes the write lock from its start (``db.writing``) so SQLite's
busy timeout applies to it. A call that fails transiently (busy, a lost server
connection, a lost race for an ordinal) is retried on the worker thread for a
bounded time (``retry.py``) before its typed error is raised.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from threadline.core.config import AgentConfig, ProviderConfig
from threadline.core.file_changes import ChangeSet
from threadline.core.memory import Memory
from threadline.core.messages import Message
from threadline.core.project import Project
from threadline.core.session import SearchHit, SessionInfo
from threadline.core.sticky import StickyContext
from threadline.core.tree import ConversationTree
from threadline.store import (
    backups,
    core_reads,
    db,
    integrity,
    key_values,
    leases,
    migrate,
    ops_file_changes,
    ops_memories,
    ops_messages,
    ops_sessions,
    search,
)
from threadline.store.errors import CorruptDatabaseError, StoreClosedError, StoreError
from threadline.store.lease_types import Acquired, Beat, Lease
from threadline.store.retry import RetryPolicy, run_with_retries
from threadline.store.translate import translate_error, translate_os_error

if TYPE_CHECKING:
    from sqlmodel import Session

    from threadline.interchange.model import ImportedConversation
    from threadline.store.import_outcome import StoredImport

log = logging.getLogger("threadline.store")

P = ParamSpec("P")
T = TypeVar("T")


class Store:
    """Sessions, messages, search and configuration, persisted; create with ``await Store.open(url)``."""

    def __init__(
        self,
        url: str,
        engine: Engine,
        executor: ThreadPoolExecutor,
        *,
        retry: RetryPolicy | None = None,
        backup_dir: Path | None = None,
    ) -> None:
        self._url = url
        self._engine = engine
        self._executor = executor
        self._closed = False
        self._closing = threading.Event()
        self._retry = retry or RetryPolicy()
        self.sqlite_file = db.sqlite_path(url)
        """The SQLite file behind the store, or ``None`` (a server, or in memory)."""
        self.backup_dir = backup_dir or (backups.backups_dir(self.sqlite_file) if self.sqlite_file else None)
        """Where backups of the SQLite file go (``backups/`` beside it unless chosen)."""
        self.backup_path: Path | None = None
        """The backup written before a schema upgrade at open, if one was."""
        self.interrupted_at_open = 0
        """How many ``streaming`` messages were found (and marked ``interrupted``) at open."""
        self.trouble: StoreError | None = None
        """The transient error (a lost server connection, a busy file) the worker is riding out:
        set by each failed attempt, cleared by the next that succeeds. A caller whose write is
        slow reads it to say why at once, before the retry window ends (``retry.py``)."""

    # -- lifecycle ---------------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        backup_dir: Path | None = None,
        retry: RetryPolicy | None = None,
        keep_daily_backups: int = 7,
    ) -> Store:
        """Open (creating if needed) and migrate the database, then mark crashed replies.

        A SQLite file that holds anything then gets its daily backup, in the
        background on the store's thread (a failed backup is logged, never fatal).
        Raises ``SchemaTooNewError``, ``CorruptDatabaseError``, ``StorageFullError``,
        ``ReadOnlyDatabaseError`` or another ``StoreError``; on failure nothing is
        left running.
        """
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="threadline-store")
        loop = asyncio.get_running_loop()
        try:
            engine, backup = await loop.run_in_executor(executor, _open_sync, url, backup_dir)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        store = cls(url, engine, executor, retry=retry, backup_dir=backup_dir)
        store.backup_path = backup
        try:
            store.interrupted_at_open = await store.mark_interrupted()
        except BaseException:
            await store.close()
            raise
        if store.sqlite_file is not None and keep_daily_backups > 0:
            executor.submit(_daily_backup, engine, store.sqlite_file, store.backup_dir, keep_daily_backups)
        return store

    @staticmethod
    def sqlite_url(path: Path) -> str:
        return db.sqlite_url(path)

    @property
    def url(self) -> str:
        return self._url

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        """Dispose of the engine and stop the worker thread; calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        self._closing.set()  # a write being retried gives up now
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._executor, _shut_down, self._engine)
        finally:
            self._executor.shutdown(wait=True)

    # -- sessions --------------------------------------------------------------------------

    async def create_session(
        self,
        *,
        title: str = "",
        agent_id: str = "",
        provider: str = "",
        model: str = "",
        session_id: str | None = None,
    ) -> SessionInfo:
        return await self._write_core(
            ops_sessions.create_session,
            title=title,
            agent_id=agent_id,
            provider=provider,
            model=model,
            session_id=session_id,
        )

    async def get_session(self, session_id: str) -> SessionInfo | None:
        return await self._read_core(ops_sessions.get_session, session_id)

    async def list_sessions(
        self,
        *,
        archived: bool = False,
        limit: int = 500,
        offset: int = 0,
        after: SessionInfo | None = None,
        project_id: str | None = None,
    ) -> list[SessionInfo]:
        """A page in sidebar order; ``after`` continues right after that session (keyset paging);
        ``project_id`` keeps to one project's chats. Read through Core: the sidebar's first
        page is read while the window starts (``core_reads``)."""
        return await self._read_core(
            core_reads.list_sessions,
            archived=archived,
            limit=limit,
            offset=offset,
            after=after,
            project_id=project_id,
        )

    async def rename_session(self, session_id: str, title: str, *, by_user: bool = True) -> SessionInfo:
        return await self._write_core(ops_sessions.rename_session, session_id, title, by_user=by_user)

    async def pin_session(self, session_id: str, pinned: bool) -> SessionInfo:
        return await self._write_core(ops_sessions.pin_session, session_id, pinned)

    async def archive_session(self, session_id: str, archived: bool) -> SessionInfo:
        return await self._write_core(ops_sessions.archive_session, session_id, archived)

    async def delete_session(self, session_id: str) -> None:
        await self._write_core(ops_sessions.delete_session, session_id)

    async def update_session(
        self,
        session_id: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        agent_id: str | None = None,
        checkpoints: dict[str, str] | None = None,
        context: StickyContext | None = None,
    ) -> SessionInfo:
        return await self._write_core(
            ops_sessions.update_session,
            session_id,
            provider=provider,
            model=model,
            agent_id=agent_id,
            checkpoints=checkpoints,
            context=context,
        )

    async def sessions_with_agent(self, agent_id: str) -> list[SessionInfo]:
        """Every session, archived ones too, whose agent is ``agent_id``."""
        return await self._read_core(ops_sessions.sessions_with_agent, agent_id)

    async def set_active_leaf(self, session_id: str, leaf_id: str | None) -> None:
        await self._write_core(ops_sessions.set_active_leaf, session_id, leaf_id)

    # -- messages ----------------------------------------------------------------------------

    async def append_message(self, session_id: str, message: Message) -> None:
        await self._write_core(ops_messages.append_messages, session_id, (message,))

    async def append_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        await self._write_core(ops_messages.append_messages, session_id, tuple(messages))

    async def update_message(self, message: Message) -> None:
        await self._write_core(ops_messages.update_message, message)

    async def update_message_text(self, message_id: str, text: str) -> None:
        await self._write_core(ops_messages.update_message_text, message_id, text)

    async def touch_message(self, message_id: str) -> None:
        """Tell other instances sharing the database that this streaming reply is still alive."""
        await self._write_core(ops_messages.touch_message, message_id)

    async def import_conversation(
        self, conversation: ImportedConversation, session_id: str, *, stop: threading.Event | None = None
    ) -> StoredImport:
        """Store (or update) one imported conversation in its own transaction (see ``ops_import``).

        Raises ``ops_import.ImportRefused`` when it does not fit the database, and
        ``ops_import.ImportCancelled`` (rolled back) when ``stop`` was set before the commit.
        """
        from threadline.store import ops_import

        return await self._write(ops_import.import_conversation, conversation, session_id, stop=stop)

    async def delete_subtree(self, session_id: str, message_id: str, fallback_leaf: str | None = None) -> int:
        """Delete a message and everything below it (``ops_subtree``); returns how many rows went."""
        from threadline.store import ops_subtree

        return await self._write(ops_subtree.delete_subtree, session_id, message_id, fallback_leaf)

    async def load_tree(self, session_id: str) -> ConversationTree:
        return await self._read_core(ops_messages.load_tree, session_id)

    async def release_page_cache(self) -> None:
        """Give back what SQLite's page cache holds (``PRAGMA shrink_memory``).

        Reading a long tree fills the connection's cache to its bound and nothing empties
        it: after that chat is closed the memory
        stayed for the rest of the run (docs/performance.md). Later reads fill it again.
        Nothing to do once the store is closed (the window may be closing meanwhile).
        """
        if not self._closed:
            await self._read_core(db.shrink_memory)

    async def message_count(self, session_id: str) -> int:
        return await self._read_core(ops_messages.message_count, session_id)

    async def mark_interrupted(self) -> int:
        """Mark replies left ``streaming`` by a dead writer as interrupted; returns how many.

        Looks first with a read, so a database that may only be read (or is busy)
        still opens when there is nothing to mark.
        """
        if not await self._read_core(core_reads.has_streaming):
            return 0
        return await self._write_core(ops_messages.mark_interrupted)

    # -- session leases (one turn per session across instances; see ``leases``) -----------------

    async def acquire_lease(self, session_id: str, holder: str, expires_after: timedelta) -> Acquired:
        return await self._write_core(leases.acquire, session_id, holder, expires_after)

    async def lease_heartbeat(self, session_id: str, holder: str) -> Beat:
        return await self._write_core(leases.heartbeat, session_id, holder)

    async def release_lease(self, session_id: str, holder: str) -> None:
        await self._write_core(leases.release, session_id, holder)

    async def request_lease_stop(self, session_id: str) -> Lease | None:
        return await self._write_core(leases.request_stop, session_id)

    async def get_lease(self, session_id: str) -> Lease | None:
        return await self._read_core(leases.get_lease, session_id)

    # -- what tools changed on disk (``ops_file_changes``; docs/workspace.md) -------------------

    async def add_change_set(self, change_set: ChangeSet) -> None:
        await self._write_core(ops_file_changes.add_change_set, change_set)

    async def change_sets(self, session_id: str) -> list[ChangeSet]:
        """The session's change sets, oldest first."""
        return await self._read_core(ops_file_changes.session_change_sets, session_id)

    async def kept_digests(self, machine: str, newer_than: float | None = None) -> set[str]:
        """The snapshot contents ``machine``'s change sets still refer to."""
        return await self._read_core(ops_file_changes.kept_digests, machine, newer_than)

    # -- saved memories (``ops_memories``; docs/memory.md) --------------------------------------

    async def memories(self) -> list[Memory]:
        return await self._read_core(ops_memories.list_memories)

    async def save_memory(self, memory: Memory) -> Memory:
        return await self._write_core(ops_memories.save_memory, memory)

    async def delete_memory(self, memory_id: str) -> None:
        await self._write_core(ops_memories.delete_memory, memory_id)

    # -- change feed -----------------------------------------------------------------------------

    async def newest_change(self) -> int:
        """The newest change-log entry's number (0 with none): where a change feed opened
        later starts, so it misses nothing written after this call (``engine/change_watch``)."""
        return await self._read_core(core_reads.newest_change)

    # -- health ------------------------------------------------------------------------------

    async def check_integrity(self) -> list[str]:
        """Problems found in the database (``[]`` when healthy); see ``integrity``.

        On SQLite this reads every page, so it takes a while on a big file.
        """
        try:
            return await self._write_core(_check_integrity)
        except CorruptDatabaseError as error:
            return [error.detail or error.user_message]

    # -- search ------------------------------------------------------------------------------

    async def search_past_chats(self, query: str, scope: search.ChatScope, limit: int) -> list[SearchHit]:
        """Full-text search within ``scope`` (``search_past_chats``, docs/memory.md)."""
        return await self._read_core(search.search_messages, query, limit, scope=scope)

    async def search(self, query: str, *, limit: int = 50, project_id: str | None = None) -> list[SearchHit]:
        """Messages matching ``query`` (see ``search``), newest first; ``project_id``: that project only."""
        return await self._read_core(search.search_messages, query, limit, project_id)

    async def search_sessions(
        self, query: str, *, limit: int = 50, archived: bool | None = None, project_id: str | None = None
    ) -> list[SessionInfo]:
        """Sessions whose title contains every word of ``query``, for the sidebar filter."""
        return await self._read_core(search.search_session_titles, query, limit, archived, project_id)

    # -- projects ------------------------------------------------------------------------------

    async def list_projects(self) -> list[Project]:
        return await self._read_core(core_reads.list_projects)

    async def get_project(self, project_id: str) -> Project | None:
        return await self._read_core(core_reads.get_project, project_id)

    async def find_project_by_name(self, name: str) -> Project | None:
        return await self._read_core(core_reads.find_project_by_name, name)

    async def save_project(self, project: Project) -> Project:
        from threadline.store import ops_projects

        return await self._write(ops_projects.save_project, project)

    async def delete_project(self, project_id: str) -> int:
        """Delete a project; its chats move out of it. Returns how many chats moved."""
        from threadline.store import ops_projects

        return await self._write(ops_projects.delete_project, project_id)

    async def set_session_project(self, session_id: str, project_id: str | None) -> SessionInfo:
        from threadline.store import ops_projects

        return await self._write(ops_projects.set_session_project, session_id, project_id)

    async def project_chat_counts(self, *, archived: bool = False) -> dict[str, int]:
        return await self._read_core(core_reads.project_chat_counts, archived=archived)

    # -- configuration ---------------------------------------------------------------------------

    async def list_providers(self) -> list[ProviderConfig]:
        return await self._read_core(core_reads.list_providers)

    async def get_provider(self, name: str) -> ProviderConfig | None:
        return await self._read_core(core_reads.get_provider, name)

    async def save_provider(self, config: ProviderConfig) -> None:
        from threadline.store import ops_config

        await self._write(ops_config.save_provider, config)

    async def remove_provider(self, name: str) -> None:
        from threadline.store import ops_config

        await self._write(ops_config.remove_provider, name)

    async def list_agents(self) -> list[AgentConfig]:
        return await self._read_core(core_reads.list_agents)

    async def get_agent(self, agent_id: str) -> AgentConfig | None:
        return await self._read_core(core_reads.get_agent, agent_id)

    async def save_agent(self, agent: AgentConfig) -> None:
        from threadline.store import ops_config

        await self._write(ops_config.save_agent, agent)

    async def remove_agent(self, agent_id: str) -> None:
        from threadline.store import ops_config

        await self._write(ops_config.remove_agent, agent_id)

    async def get_setting(self, key: str, default: Any = None) -> Any:
        return await self._read_core(key_values.get_value, "settings", key, default)

    async def set_setting(self, key: str, value: Any) -> None:
        await self._write_core(key_values.set_value, "settings", key, value)

    async def get_ui_state(self, key: str, default: Any = None) -> Any:
        return await self._read_core(key_values.get_value, "ui_state", key, default)

    async def set_ui_state(self, key: str, value: Any) -> None:
        await self._write_core(key_values.set_value, "ui_state", key, value)

    # -- plumbing ------------------------------------------------------------------------------

    async def _read(
        self, operation: Callable[Concatenate[Session, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Run ``operation`` in one read transaction on the worker thread, with an ORM session."""
        return await self._submit(_Transaction(writes=False, orm=True), operation, *args, **kwargs)

    async def _write(
        self, operation: Callable[Concatenate[Session, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Run ``operation`` in one transaction holding the write lock from its start, with an ORM session."""
        return await self._submit(_Transaction(writes=True, orm=True), operation, *args, **kwargs)

    async def _read_core(
        self, operation: Callable[Concatenate[sa.Connection, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Like ``_read`` for an operation written in SQLAlchemy Core (``core_reads``): it is
        given the connection, and no ORM module is imported for it."""
        return await self._submit(_Transaction(writes=False, orm=False), operation, *args, **kwargs)

    async def _write_core(
        self, operation: Callable[Concatenate[sa.Connection, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Like ``_write`` for an operation written in SQLAlchemy Core."""
        return await self._submit(_Transaction(writes=True, orm=False), operation, *args, **kwargs)

    async def _submit(
        self,
        transaction: _Transaction,
        operation: Callable[Concatenate[Any, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        if self._closed:
            raise StoreClosedError("the store is closed")
        once = functools.partial(self._in_transaction, transaction, operation, *args, **kwargs)
        call = functools.partial(
            run_with_retries, once, self._retry, stop=self._closing, on_trouble=self._troubled
        )
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    def _troubled(self, error: StoreError | None) -> None:
        """Worker thread: remember what is being retried (one attribute store; read from the loop)."""
        self.trouble = error

    def _in_transaction(
        self,
        transaction: _Transaction,
        operation: Callable[Concatenate[Any, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """One attempt (worker thread); driver errors become typed ``StoreError``s.

        An ORM operation gets a SQLModel ``Session``; ``sqlmodel`` (and with it SQLAlchemy's
        ORM and pydantic) is imported here, by the first such operation, not with the store.
        """
        try:
            with self._engine.connect() as connection:
                if transaction.writes:
                    db.mark_writing(connection)
                if transaction.orm:
                    from sqlmodel import Session

                    with Session(bind=connection, expire_on_commit=False) as session, session.begin():
                        return operation(session, *args, **kwargs)
                with connection.begin():
                    return operation(connection, *args, **kwargs)
        except Exception as error:
            translated = translate_error(error, sqlite_file=self.sqlite_file, backup_dir=self.backup_dir)
            if translated is None or translated is error:
                raise
            raise translated from error


@dataclass(frozen=True, slots=True)
class _Transaction:
    """How an operation runs: ``writes`` takes the write lock first; ``orm`` hands it a Session."""

    writes: bool
    orm: bool


def _check_integrity(connection: sa.Connection) -> list[str]:
    if connection.dialect.name == "sqlite":
        raw = connection.connection.dbapi_connection
        assert raw is not None
        return integrity.check_sqlite(raw)  # type: ignore[arg-type]
    return integrity.check_server_tables(connection)


def _daily_backup(engine: Engine, sqlite_file: Path, directory: Path | None, keep_days: int) -> None:
    """Today's backup of a SQLite file that holds something (worker thread; never raises)."""
    try:
        with engine.connect() as connection:
            holds_data = connection.exec_driver_sql(
                "SELECT EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM providers)"
            ).scalar()
        if holds_data:
            backups.daily_backup(sqlite_file, keep_days, directory=directory)
    except Exception as error:  # a backup must never take the store down with it
        log.warning("the daily backup of %s failed: %s", sqlite_file, error)


def _shut_down(engine: Engine) -> None:
    """Let SQLite refresh its planner statistics (its own advice for closing), then dispose."""
    try:
        if engine.dialect.name == "sqlite":
            with engine.connect() as connection:
                connection.exec_driver_sql("PRAGMA optimize")
    except Exception:  # statistics are an optimisation; closing must not fail over them
        log.debug("PRAGMA optimize failed", exc_info=True)
    finally:
        engine.dispose()


def _open_sync(url: str, backup_dir: Path | None) -> tuple[Engine, Path | None]:
    """Create the engine and bring the schema to head (on the worker thread)."""
    try:
        engine = db.create_engine(url)
    except OSError as error:  # the SQLite file's folder could not be made
        raise translate_os_error(error) from error
    except Exception as error:
        raise StoreError(
            str(error),
            user_message=(
                "The database address is not usable. Use a file path or a URL such as "
                "postgresql+psycopg://user@host/threadline, and check that its driver is installed."
            ),
        ) from error
    sqlite_file = db.sqlite_path(url)
    try:
        backup = migrate.ensure_schema(engine, sqlite_file=sqlite_file, backup_dir=backup_dir)
    except Exception as error:
        engine.dispose()
        translated = translate_error(error, sqlite_file=sqlite_file, backup_dir=backup_dir)
        if translated is None or translated is error:
            raise
        raise translated from error
    log.info("opened store %s", engine.url.render_as_string())
    return engine, backup
