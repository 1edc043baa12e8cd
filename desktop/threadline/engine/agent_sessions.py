"""The agents facet (``engine.agents``): the agent library where it meets the open chats.

``AgentService`` (``engine/agents.py``) keeps agents in the store and knows nothing
of sessions. Most agent operations touch open chats too: saving an agent offers its
new settings to every tab that pinned the old ones, deleting one moves each of its
chats to the default agent with a marker in its history, and a turn runs with the
agent its history pinned plus its project's instructions. Those meetings live here,
so the engine's core keeps only the session registry and the turns.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from threadline.core.config import DEFAULT_AGENT_ID, AgentConfig
from threadline.core.messages import Message
from threadline.core.project import with_project
from threadline.core.session import SessionInfo
from threadline.engine.agents import AgentError, AgentService, SessionAgent, agent_marker, session_agent
from threadline.engine.errors import SessionClosedError
from threadline.engine.events import AgentChanged, MessageAdded
from threadline.engine.live import LiveConversation
from threadline.engine.projects import ProjectService

if TYPE_CHECKING:
    from threadline.engine.engine import Engine


class Agents:
    """What ``AgentsApi`` offers the window and the command line, plus the agent a turn runs with."""

    def __init__(self, engine: Engine, service: AgentService, projects: ProjectService) -> None:
        self._engine = engine
        self._store = engine.store
        self.service = service
        """The stored agents alone (``find`` by name, ``free_name``): no session is told."""
        self._projects = projects

    async def get_agent(self, agent_id: str = DEFAULT_AGENT_ID) -> AgentConfig:
        return await self.service.get(agent_id)

    async def find_agent(self, name_or_id: str) -> AgentConfig | None:
        """The agent with this id or name (the command line's ``--agent``), or ``None``."""
        return await self.service.find(name_or_id)

    async def list_agents(self) -> list[AgentConfig]:
        return await self.service.all()

    async def create_agent(self, agent: AgentConfig) -> AgentConfig:
        return await self.service.create(agent)

    async def duplicate_agent(self, agent_id: str) -> AgentConfig:
        return await self.service.duplicate(agent_id)

    async def export_agents(self, agent_ids: Sequence[str] | None = None) -> str:
        return await self.service.export_text(agent_ids)

    async def import_agents(self, text: str) -> list[AgentConfig]:
        return await self.service.import_text(text)

    async def save_agent(self, agent: AgentConfig) -> None:
        """Store an edited agent; open chats that pinned its older settings are offered the new ones."""
        await self.service.save(agent)
        current = await self.service.get(agent.id)
        for live in self._engine.sessions.open_conversations():
            if (live.info.agent_id or DEFAULT_AGENT_ID) == current.id:
                state = session_agent(live.conversation.markers_on_path(), current)
                live.emit(AgentChanged(live.session_id, state.agent, update_available=state.update_available))

    async def delete_agent(self, agent_id: str) -> int:
        """Delete an agent; each of its chats falls back to the default agent and says so.

        Every such chat, open or not, gets an agent marker ("Agent: Default — the agent
        Reviewer was deleted") in its history, and an open tab a notice. Returns how many.
        """
        removed = await self.service.remove(agent_id)
        fallback = await self.service.get()
        detail = f"the agent {removed.name} was deleted"
        sessions = await self._store.sessions_with_agent(agent_id)
        for info in sessions:
            live = self._engine.sessions.live(info.id)
            if live is not None:
                self._engine.spawn(self._fall_back(live, fallback, detail))
            else:
                marker = Message.marker_message(agent_marker(fallback, detail), parent_id=info.active_leaf)
                await self._store.append_message(info.id, marker)
                self._engine.sessions.session_changed(await self._pin_agent(info.id, fallback))
        return len(sessions)

    async def session_agent(self, session_id: str) -> SessionAgent:
        """The agent an open session runs with, and whether newer settings are on offer."""
        live = self._engine.sessions.live(session_id)
        if live is None:
            raise SessionClosedError()
        return session_agent(live.conversation.markers_on_path(), await self.service.get(live.info.agent_id))

    async def set_session_agent(self, session_id: str, agent_id: str) -> None:
        """Switch a session's agent from the next request on, marked in its history.

        The marker carries the agent's settings as they are now; the session's provider
        and model follow the agent when it names them.
        """
        live = self._engine.turns.ready(session_id)
        agent = await self.service.find(agent_id)
        if agent is None:
            raise AgentError("That agent no longer exists; pick another.")
        await self._add_agent_marker(live, agent)

    async def use_agent_settings(self, session_id: str) -> None:
        """Take the agent's current settings into a session that pinned older ones (a new marker)."""
        live = self._engine.turns.ready(session_id)
        await self._add_agent_marker(live, await self.service.get(live.info.agent_id), "new settings")

    async def turn_agent(self, live: LiveConversation) -> AgentConfig:
        """The agent a turn runs with: the one the session's history pinned (see ``engine/agents.py``),
        with its project's instructions and context added (``core/project.py``)."""
        stored = await self.service.get(live.info.agent_id)
        agent = session_agent(live.conversation.markers_on_path(), stored).agent
        agent = with_project(agent, await self._projects.get(live.info.project_id))
        return await self._engine.memory.offer_past_chats(agent, live.info.project_id)

    async def named_agent(self, live: LiveConversation, agent_id: str) -> AgentConfig | None:
        """A compare worker's agent (by id or name), with the session's project around it: its
        instructions and context, and the past-chat search the project offers, as ``turn_agent``
        gives the session's own agent (a column answers in the same chat)."""
        agent = await self.service.find(agent_id)
        if agent is None:
            return None
        agent = with_project(agent, await self._projects.get(live.info.project_id))
        return await self._engine.memory.offer_past_chats(agent, live.info.project_id)

    async def _add_agent_marker(
        self, live: LiveConversation, agent: AgentConfig, detail: str = "", notice: str = ""
    ) -> None:
        message = live.conversation.add_marker(agent_marker(agent, detail))
        try:
            await self._store.append_message(live.session_id, message)
        except BaseException:
            live.conversation.tree.remove_leaf(message.id)
            raise
        live.emit(MessageAdded(live.session_id, message))
        info = await self._pin_agent(live.session_id, agent)
        self._engine.sessions.session_changed(info)
        await self._engine.sessions.remember_last_used(info)
        live.emit(AgentChanged(live.session_id, agent, notice=notice))

    async def _pin_agent(self, session_id: str, agent: AgentConfig) -> SessionInfo:
        """Point the session row at ``agent`` (and its provider and model when it names them)."""
        names_model = bool(agent.provider and agent.model)
        return await self._store.update_session(
            session_id,
            agent_id=agent.id,
            provider=agent.provider if names_model else None,
            model=agent.model if names_model else None,
        )

    async def _fall_back(self, live: LiveConversation, fallback: AgentConfig, detail: str) -> None:
        """An open session whose agent was deleted: after any running turn, switch it and say so."""
        name = detail.removeprefix("the agent ").removesuffix(" was deleted")
        notice = f"The agent {name} was deleted, so this chat now uses {fallback.name}."
        while self._engine.sessions.live(live.session_id) is live:
            with contextlib.suppress(Exception):  # the turn's own failure is the tab's to show
                await self._engine.turns.wait_idle(live.session_id)
            if not self._engine.turns.running(live.session_id) and live.conversation.ready_for_input:
                await self._add_agent_marker(live, fallback, detail, notice)
                return
            await asyncio.sleep(0.1)  # a turn that is only saving its last writes
