"""The async repository the engine talks to: ``Store``.

Every database call runs on one dedicated worker thread. One thread serialises
the writes (SQLite has a single writer anyway, and ordering of "append, then
update text" must hold), and the asyncio/Qt thread only ever awaits, so it
never blocks on disk or network (DESIGN.md §3). Underneath is plain synchronous
SQLAlchemy/SQLModel, one transaction per call, in the ``ops_*`` modules.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy.engine import Engine
from sqlmodel import Session

from threadline.core.config import AgentConfig, ProviderConfig
from threadline.core.messages import Message
from threadline.core.session import SearchHit, SessionInfo
from threadline.core.tree import ConversationTree
from threadline.store import db, migrate, ops_config, ops_messages, ops_sessions, search
from threadline.store.errors import StoreClosedError, StoreError
from threadline.store.tables import SettingRow, UIStateRow

log = logging.getLogger("threadline.store")

P = ParamSpec("P")
T = TypeVar("T")


class Store:
    """Sessions, messages, search and configuration, persisted; create with ``await Store.open(url)``."""

    def __init__(self, url: str, engine: Engine, executor: ThreadPoolExecutor) -> None:
        self._url = url
        self._engine = engine
        self._executor = executor
        self._closed = False
        self.backup_path: Path | None = None
        """The backup written before a schema upgrade at open, if one was."""
        self.interrupted_at_open = 0
        """How many ``streaming`` messages were found (and marked ``interrupted``) at open."""

    # -- lifecycle ---------------------------------------------------------------------

    @classmethod
    async def open(cls, url: str, *, backup_dir: Path | None = None) -> Store:
        """Open (creating if needed) and migrate the database, then mark crashed replies.

        Raises ``SchemaTooNewError``, ``CorruptDatabaseError``, ``StorageFullError``
        or another ``StoreError``; on failure nothing is left running.
        """
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="threadline-store")
        loop = asyncio.get_running_loop()
        try:
            engine, backup = await loop.run_in_executor(executor, _open_sync, url, backup_dir)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        store = cls(url, engine, executor)
        store.backup_path = backup
        try:
            store.interrupted_at_open = await store.mark_interrupted()
        except BaseException:
            await store.close()
            raise
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
        return await self._run(
            ops_sessions.create_session,
            title=title,
            agent_id=agent_id,
            provider=provider,
            model=model,
            session_id=session_id,
        )

    async def get_session(self, session_id: str) -> SessionInfo | None:
        return await self._run(ops_sessions.get_session, session_id)

    async def list_sessions(
        self, *, archived: bool = False, limit: int = 500, offset: int = 0
    ) -> list[SessionInfo]:
        return await self._run(ops_sessions.list_sessions, archived=archived, limit=limit, offset=offset)

    async def rename_session(self, session_id: str, title: str, *, by_user: bool = True) -> SessionInfo:
        return await self._run(ops_sessions.rename_session, session_id, title, by_user=by_user)

    async def pin_session(self, session_id: str, pinned: bool) -> SessionInfo:
        return await self._run(ops_sessions.pin_session, session_id, pinned)

    async def archive_session(self, session_id: str, archived: bool) -> SessionInfo:
        return await self._run(ops_sessions.archive_session, session_id, archived)

    async def delete_session(self, session_id: str) -> None:
        await self._run(ops_sessions.delete_session, session_id)

    async def update_session(
        self,
        session_id: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        agent_id: str | None = None,
        checkpoints: dict[str, str] | None = None,
    ) -> SessionInfo:
        return await self._run(
            ops_sessions.update_session,
            session_id,
            provider=provider,
            model=model,
            agent_id=agent_id,
            checkpoints=checkpoints,
        )

    async def set_active_leaf(self, session_id: str, leaf_id: str | None) -> None:
        await self._run(ops_sessions.set_active_leaf, session_id, leaf_id)

    # -- messages ----------------------------------------------------------------------------

    async def append_message(self, session_id: str, message: Message) -> None:
        await self._run(ops_messages.append_messages, session_id, (message,))

    async def append_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        await self._run(ops_messages.append_messages, session_id, tuple(messages))

    async def update_message(self, message: Message) -> None:
        await self._run(ops_messages.update_message, message)

    async def update_message_text(self, message_id: str, text: str) -> None:
        await self._run(ops_messages.update_message_text, message_id, text)

    async def touch_message(self, message_id: str) -> None:
        """Tell other instances sharing the database that this streaming reply is still alive."""
        await self._run(ops_messages.touch_message, message_id)

    async def load_tree(self, session_id: str) -> ConversationTree:
        return await self._run(ops_messages.load_tree, session_id)

    async def message_count(self, session_id: str) -> int:
        return await self._run(ops_messages.message_count, session_id)

    async def mark_interrupted(self) -> int:
        return await self._run(ops_messages.mark_interrupted)

    # -- search ------------------------------------------------------------------------------

    async def search(self, query: str, *, limit: int = 50) -> list[SearchHit]:
        """Messages matching ``query`` (see ``search``), newest first."""
        return await self._run(search.search_messages, query, limit)

    async def search_sessions(self, query: str, *, limit: int = 50) -> list[SessionInfo]:
        """Sessions whose title contains every word of ``query``, for the sidebar filter."""
        return await self._run(search.search_session_titles, query, limit)

    # -- configuration ---------------------------------------------------------------------------

    async def list_providers(self) -> list[ProviderConfig]:
        return await self._run(ops_config.list_providers)

    async def get_provider(self, name: str) -> ProviderConfig | None:
        return await self._run(ops_config.get_provider, name)

    async def save_provider(self, config: ProviderConfig) -> None:
        await self._run(ops_config.save_provider, config)

    async def remove_provider(self, name: str) -> None:
        await self._run(ops_config.remove_provider, name)

    async def list_agents(self) -> list[AgentConfig]:
        return await self._run(ops_config.list_agents)

    async def get_agent(self, agent_id: str) -> AgentConfig | None:
        return await self._run(ops_config.get_agent, agent_id)

    async def save_agent(self, agent: AgentConfig) -> None:
        await self._run(ops_config.save_agent, agent)

    async def remove_agent(self, agent_id: str) -> None:
        await self._run(ops_config.remove_agent, agent_id)

    async def get_setting(self, key: str, default: Any = None) -> Any:
        return await self._run(ops_config.get_value, SettingRow, key, default)

    async def set_setting(self, key: str, value: Any) -> None:
        await self._run(ops_config.set_value, SettingRow, key, value)

    async def get_ui_state(self, key: str, default: Any = None) -> Any:
        return await self._run(ops_config.get_value, UIStateRow, key, default)

    async def set_ui_state(self, key: str, value: Any) -> None:
        await self._run(ops_config.set_value, UIStateRow, key, value)

    # -- plumbing ------------------------------------------------------------------------------

    async def _run(
        self, operation: Callable[Concatenate[Session, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Run ``operation`` in one transaction on the worker thread; errors become ``StoreError``."""
        if self._closed:
            raise StoreClosedError("the store is closed")
        call = functools.partial(_in_transaction, self._engine, operation, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)


def _in_transaction(
    engine: Engine, operation: Callable[Concatenate[Session, P], T], *args: P.args, **kwargs: P.kwargs
) -> T:
    try:
        with Session(engine, expire_on_commit=False) as session, session.begin():
            return operation(session, *args, **kwargs)
    except Exception as error:
        translated = db.translate_error(error)
        if translated is None or translated is error:
            raise
        raise translated from error


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
    except Exception as error:
        raise StoreError(str(error), user_message=f"The database address is not usable: {error}") from error
    try:
        backup = migrate.ensure_schema(engine, sqlite_file=db.sqlite_path(url), backup_dir=backup_dir)
    except Exception as error:
        engine.dispose()
        translated = db.translate_error(error)
        if translated is None or translated is error:
            raise
        raise translated from error
    log.info("opened store %s", engine.url.render_as_string())
    return engine, backup
