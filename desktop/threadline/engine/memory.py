"""``engine.memory``: saved memories, the memory switch and past-chat search (docs/memory.md).

Memories live in the store's ``memories`` table (history-like user data: it follows the
database to a server and into a copy). The settings (memory on or off, how far
``search_past_chats`` reaches, the projects that offer it to every agent) are one stored
setting, ``memory``. The switch is also kept here as a plain flag, read without waiting
by the tool registry when it decides which tools a turn offers.

Every change to the list is announced as ``MemoriesChanged`` to the session observers
(Settings → Memory, the context meters). Another instance's changes arrive through the
change feed (migration 0013): the change watch calls ``refresh``, which announces the list
only when it differs from the one last told, so a change made here is not echoed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from threadline.core.config import AgentConfig
from threadline.core.ids import utcnow
from threadline.core.memory import (
    SEARCH_PAST_CHATS,
    Memory,
    MemoryScope,
    PastChatsScope,
    applying,
    clean_memory_text,
    memory_block,
)
from threadline.core.session import SearchHit
from threadline.engine.errors import EngineError
from threadline.engine.events import MemoriesChanged
from threadline.store.errors import NotFoundError
from threadline.store.repository import Store
from threadline.store.search import ChatScope

log = logging.getLogger("threadline.engine.memory")

MEMORY_SETTING = "memory"

ChatScopeOf = Callable[[str], Awaitable[tuple[str, str | None]]]
"""A chat's (agent id, project id), by session id."""


class MemoryChangeError(EngineError):
    """A memory that cannot be saved as given (empty, too long, gone)."""


@dataclass(frozen=True, slots=True)
class MemorySettings:
    enabled: bool = True
    """Off: no memory reaches a request and neither memory tool is offered."""
    past_chats: PastChatsScope = PastChatsScope.SAME_PROJECT
    past_chat_projects: tuple[str, ...] = ()
    """Projects whose chats are offered ``search_past_chats`` whatever their agent enables."""

    def to_json(self) -> dict[str, object]:
        return {
            "enabled": self.enabled,
            "past_chats": self.past_chats.value,
            "past_chat_projects": list(self.past_chat_projects),
        }

    @classmethod
    def from_json(cls, value: object) -> MemorySettings:
        if not isinstance(value, dict):
            return cls()
        scope = str(value.get("past_chats"))
        projects = value.get("past_chat_projects")
        return cls(
            enabled=value.get("enabled") is not False,
            past_chats=PastChatsScope(scope)
            if scope in PastChatsScope._value2member_map_
            else PastChatsScope.SAME_PROJECT,
            past_chat_projects=tuple(p for p in projects if isinstance(p, str))
            if isinstance(projects, list)
            else (),
        )


class MemoryService:
    """Implements ``MemoryApi`` (``engine/capability_apis.py``)."""

    def __init__(
        self,
        store: Store,
        chat_scope: ChatScopeOf,
        announce: Callable[[MemoriesChanged], None] = lambda _event: None,
    ) -> None:
        self._store = store
        self._chat_scope = chat_scope
        self._announce = announce
        self._known: tuple[Memory, ...] | None = None
        """The list as last read or told (``None`` before the first read)."""
        self.enabled = True
        """The switch as last read or set (``load`` at start-up; ``set_settings``)."""

    async def load(self) -> None:
        self.enabled = (await self.settings()).enabled

    # -- settings ------------------------------------------------------------------------------

    async def settings(self) -> MemorySettings:
        return MemorySettings.from_json(await self._store.get_setting(MEMORY_SETTING))

    async def set_settings(self, settings: MemorySettings) -> None:
        await self._store.set_setting(MEMORY_SETTING, settings.to_json())
        self.enabled = settings.enabled

    # -- memories ------------------------------------------------------------------------------

    async def memories(self) -> list[Memory]:
        """Every memory as stored now; ``MemoriesChanged`` follows when it differs from the last read."""
        memories = await self._store.memories()
        self._remember(memories)
        return memories

    async def refresh(self) -> None:
        """The change feed says memories changed: read them, and announce the list if it differs
        from the one last told (a change made here was announced already and stays silent)."""
        self._remember(await self._store.memories(), always=self._known is None)

    async def add(self, text: str, scope: MemoryScope = MemoryScope.GLOBAL, target: str = "") -> Memory:
        memory = Memory(_clean(text), scope, _target(scope, target))
        saved = await self._store.save_memory(memory)
        await self._changed()
        return saved

    async def edit(
        self, memory_id: str, text: str, scope: MemoryScope | None = None, target: str | None = None
    ) -> Memory:
        found = next((m for m in await self._store.memories() if m.id == memory_id), None)
        if found is None:
            raise MemoryChangeError("That memory is gone: it was deleted meanwhile.")
        scope = found.scope if scope is None else scope
        target = found.target if target is None else target
        edited = replace(
            found, text=_clean(text), scope=scope, target=_target(scope, target), updated_at=utcnow()
        )
        saved = await self._store.save_memory(edited)
        await self._changed()
        return saved

    async def delete(self, memory_id: str) -> None:
        try:
            await self._store.delete_memory(memory_id)
        except NotFoundError:
            raise MemoryChangeError("That memory is gone: it was deleted meanwhile.") from None
        await self._changed()

    async def _changed(self) -> None:
        """After a change made here: always announce, with the list as stored now."""
        self._remember(await self._store.memories(), always=True)

    def _remember(self, memories: list[Memory], *, always: bool = False) -> None:
        known = tuple(memories)
        changed = self._known is not None and known != self._known
        self._known = known
        if changed or always:
            self._announce(MemoriesChanged(known))

    async def for_turn(self, agent_id: str, project_id: str | None) -> list[Memory]:
        """The memories a turn of ``agent_id`` in ``project_id`` sends; none while memory is off.

        The switch is read again here, so another window's change reaches this one's next turn."""
        await self.load()
        if not self.enabled:
            return []
        return applying(await self._store.memories(), agent_id, project_id)

    async def block_for(self, agent_id: str, project_id: str | None) -> str:
        """The system prompt's memory part for such a turn ("" when there is none)."""
        return memory_block(await self.for_turn(agent_id, project_id))

    # -- past chats ---------------------------------------------------------------------------

    async def offer_past_chats(self, agent: AgentConfig, project_id: str | None) -> AgentConfig:
        """``agent`` with ``search_past_chats`` enabled when the chat's project turns it on."""
        if project_id is None or not self.enabled or agent.offers(SEARCH_PAST_CHATS):
            return agent
        if project_id not in (await self.settings()).past_chat_projects:
            return agent
        return replace(agent, enabled_tools=(*agent.enabled_tools, SEARCH_PAST_CHATS))

    async def search_past_chats(self, session_id: str, query: str, limit: int) -> list[SearchHit]:
        """Messages of other chats matching ``query``, newest first, within what the chat may
        reach: its own project's chats (or those in no project), or all with the setting."""
        _agent, project_id = await self._chat_scope(session_id)
        everywhere = (await self.settings()).past_chats is PastChatsScope.ALL
        scope = ChatScope(
            project_id=None if everywhere else project_id,
            outside_projects=not everywhere and project_id is None,
            exclude_session=session_id,
        )
        return await self._store.search_past_chats(query, scope, limit)

    async def chat_scope(self, session_id: str) -> tuple[str, str | None]:
        return await self._chat_scope(session_id)


def _clean(text: str) -> str:
    try:
        return clean_memory_text(text)
    except ValueError as err:
        raise MemoryChangeError(str(err)) from None


def _target(scope: MemoryScope, target: str) -> str:
    if scope is MemoryScope.GLOBAL:
        return ""
    if not target:
        raise MemoryChangeError(f"A {scope.value} memory needs the {scope.value} it belongs to.")
    return target
