"""Agents: the stored list, and which agent a session runs with (docs/design.md §1, "Agents").

``AgentService`` keeps the agents in the store: list, create, edit, duplicate,
delete, export and import. Names are unique (ignoring case), since the command
line and the picker find agents by name. The built-in default agent always
exists (it is made on first use) and cannot be deleted: it is what sessions fall
back to.

Which agent a session runs with is read from its history: the latest agent
marker on the active path carries the agent's settings as they were when it was
picked (``session_agent``). Editing an agent therefore changes new sessions and
sessions that never picked one, while a session that did keeps its settings and
is offered the new ones (``SessionAgent.update_available``). Approval rules are
the exception: "Always allow" grants trust to the agent, so they are always the
agent's current rules.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from threadline.core.agent_json import (
    AgentFormatError,
    agent_from_json,
    agent_to_json,
    export_text,
    parse_export,
)
from threadline.core.config import DEFAULT_AGENT_ID, AgentConfig
from threadline.core.messages import Marker, MarkerType, Message, new_id
from threadline.engine.errors import EngineError
from threadline.store.repository import Store

log = logging.getLogger("threadline.engine")

DEFAULT_AGENT_NAME = "Default"


class AgentError(EngineError):
    """An agent operation that cannot be done as asked (the message says why)."""


@dataclass(frozen=True, slots=True)
class SessionAgent:
    """The agent a session runs with, and what the tab should say about it.

    ``update_available``: the agent's stored settings differ from the ones this
    session pinned, so the tab offers "Use the agent's new settings".
    ``notice``: a change the person did not make here (the agent was deleted).
    """

    agent: AgentConfig
    update_available: bool = False
    notice: str = ""


def built_in_default() -> AgentConfig:
    return AgentConfig(id=DEFAULT_AGENT_ID, name=DEFAULT_AGENT_NAME)


def agent_marker(agent: AgentConfig, detail: str = "") -> Marker:
    """The marker that switches a session to ``agent``, with its settings as they are now."""
    return Marker(MarkerType.AGENT, agent.name, detail=detail, settings=agent_to_json(agent))


def latest_agent_marker(path: Sequence[Message]) -> Marker | None:
    for message in reversed(path):
        if message.marker is not None and message.marker.type is MarkerType.AGENT:
            return message.marker
    return None


def pinned_agent(marker: Marker | None) -> AgentConfig | None:
    """The agent a marker's snapshot holds (``None``: no marker, or a snapshot that cannot be read)."""
    if marker is None or marker.settings is None:
        return None
    try:
        return agent_from_json(marker.settings)
    except AgentFormatError as err:
        log.warning("an agent marker's settings cannot be read (%s); the agent's own are used", err)
        return None


def _comparable(agent: AgentConfig) -> dict[str, Any]:
    data = agent_to_json(agent)
    for key in ("approval_rules", "default_approval", "name"):
        data.pop(key)
    return data


def session_agent(path: Sequence[Message], current: AgentConfig) -> SessionAgent:
    """The agent of a session whose path is ``path`` and whose stored agent is ``current``.

    Only the path's markers count: ``Conversation.markers_on_path()`` is enough, and on a
    long chat much cheaper than the whole path."""
    pinned = pinned_agent(latest_agent_marker(path))
    if pinned is None:
        return SessionAgent(current)
    # What the agent may DO comes from the agent stored here, never from history: a
    # snapshot in a marker may come from an imported file (untrusted input), and its
    # tools, approval rules, folders or context hooks would otherwise let that file run
    # commands or read files. The snapshot pins only what the model is told and which
    # model answers.
    pinned = replace(
        pinned,
        enabled_tools=current.enabled_tools,
        approval_rules=current.approval_rules,
        default_approval=current.default_approval,
        allowed_folders=current.allowed_folders,
        context=current.context,
        context_share=current.context_share,
    )
    same = pinned.id == current.id
    if same:
        pinned = replace(
            pinned,
            name=current.name,
            approval_rules=current.approval_rules,
            default_approval=current.default_approval,
        )
    return SessionAgent(pinned, update_available=same and _comparable(pinned) != _comparable(current))


class AgentService:
    """The agents in the store (see the module doc)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def all(self) -> list[AgentConfig]:
        """Every agent, the default first, then by name."""
        stored = await self._store.list_agents()
        default = next((a for a in stored if a.id == DEFAULT_AGENT_ID), built_in_default())
        others = sorted((a for a in stored if a.id != DEFAULT_AGENT_ID), key=lambda a: a.name.casefold())
        return [default, *others]

    async def get(self, agent_id: str = DEFAULT_AGENT_ID) -> AgentConfig:
        """The agent ``agent_id``; the default one for "" or an id that no longer exists."""
        agent = await self._store.get_agent(agent_id or DEFAULT_AGENT_ID)
        if agent is None and agent_id and agent_id != DEFAULT_AGENT_ID:
            agent = await self._store.get_agent(DEFAULT_AGENT_ID)
        return agent or built_in_default()

    async def exists(self, agent_id: str) -> bool:
        return (
            not agent_id or agent_id == DEFAULT_AGENT_ID or await self._store.get_agent(agent_id) is not None
        )

    async def find(self, name_or_id: str) -> AgentConfig | None:
        """The agent with this id, or this name (ignoring case)."""
        key = name_or_id.strip()
        agents = await self.all()
        by_id = next((a for a in agents if a.id == key), None)
        return by_id or next((a for a in agents if a.name.casefold() == key.casefold()), None)

    async def create(self, agent: AgentConfig) -> AgentConfig:
        """Store ``agent`` as a new agent (a fresh id); its name must be free."""
        created = replace(agent, id=new_id(), name=agent.name.strip())
        await self._check_name(created)
        await self._store.save_agent(created)
        return created

    async def save(self, agent: AgentConfig) -> AgentConfig:
        """Store the edited ``agent`` (an existing id, or the default one)."""
        agent = replace(agent, name=agent.name.strip())
        if not await self.exists(agent.id):
            raise AgentError(f"The agent {agent.name!r} no longer exists; it may have been deleted.")
        await self._check_name(agent)
        await self._store.save_agent(agent)
        return agent

    async def duplicate(self, agent_id: str) -> AgentConfig:
        original = await self.get(agent_id)
        return await self.create(replace(original, name=await self.free_name(f"{original.name} (copy)")))

    async def remove(self, agent_id: str) -> AgentConfig:
        """Delete an agent; returns what it was. Its sessions are the engine's to move (see Engine)."""
        if not agent_id or agent_id == DEFAULT_AGENT_ID:
            raise AgentError(
                "The default agent cannot be deleted: it is what other agents' chats fall back to."
            )
        agent = await self._store.get_agent(agent_id)
        if agent is None:
            raise AgentError("That agent no longer exists.")
        await self._store.remove_agent(agent_id)
        return agent

    async def export_text(self, agent_ids: Sequence[str] | None = None) -> str:
        """An export file of the agents named (``None``: all of them)."""
        agents = await self.all()
        if agent_ids is not None:
            wanted = set(agent_ids)
            agents = [a for a in agents if a.id in wanted]
        return export_text(agents)

    async def import_text(self, text: str) -> list[AgentConfig]:
        """Add the agents of an export file as new agents (a taken name gets a number)."""
        imported: list[AgentConfig] = []
        for agent in parse_export(text):  # all checked before any is stored
            imported.append(await self.create(replace(agent, name=await self.free_name(agent.name))))
        return imported

    async def free_name(self, name: str) -> str:
        """``name``, or ``name (2)``, ``name (3)``… whichever no agent has."""
        taken = {a.name.casefold() for a in await self.all()}
        candidate, number = name, 2
        while candidate.casefold() in taken:
            candidate, number = f"{name} ({number})", number + 1
        return candidate

    async def _check_name(self, agent: AgentConfig) -> None:
        if not agent.name:
            raise AgentError("An agent needs a name.")
        for other in await self.all():
            if other.id != agent.id and other.name.casefold() == agent.name.casefold():
                raise AgentError(f"There is already an agent called {other.name!r}. Choose another name.")
