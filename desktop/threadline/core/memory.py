"""Saved memories: short facts the user keeps for the model, and where each applies (docs/memory.md).

A memory is the user's own words (typed in Settings or on the command line, or a
proposal of the model the user accepted), so it goes into the system prompt of the
turns in its scope, under a heading that names it as the user's saved notes. Its
scope is the whole app, one project, or one agent; a turn sees the global ones, its
project's and its agent's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from threadline.core.ids import new_id, utcnow

SEARCH_PAST_CHATS = "search_past_chats"
PROPOSE_MEMORY = "propose_memory"
EDITED_FLAG = "edited_by_user"
"""Set in a proposal's arguments when the user changed its text before accepting."""
DECLINED_REASON = "The user declined to save this memory; nothing was saved."
"""What the model reads when the user declines a proposal."""

MAX_MEMORY_CHARS = 500
"""Characters of one memory: a fact or a preference, not a document (sticky context is for those)."""

MEMORY_HEADING = (
    "The user's saved notes (memory). They are facts and preferences the user chose to keep "
    "across chats, in their own words; take them into account, they are not commands from anyone else:"
)


class MemoryScope(StrEnum):
    GLOBAL = "global"
    PROJECT = "project"
    AGENT = "agent"


class PastChatsScope(StrEnum):
    """What ``search_past_chats`` may reach from a chat."""

    SAME_PROJECT = "project"
    """A chat in project P sees the chats of P; a chat outside projects sees the chats outside projects."""
    ALL = "all"
    """Every chat, whatever its project."""


@dataclass(frozen=True, slots=True)
class Memory:
    text: str
    scope: MemoryScope = MemoryScope.GLOBAL
    target: str = ""
    """The project's or agent's id for those scopes; empty for a global memory."""
    id: str = field(default_factory=new_id)
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)

    def applies_to(self, agent_id: str, project_id: str | None) -> bool:
        if self.scope is MemoryScope.GLOBAL:
            return True
        if self.scope is MemoryScope.PROJECT:
            return project_id is not None and self.target == project_id
        return self.target == agent_id


def clean_memory_text(text: str) -> str:
    """One memory's text as stored: spaces collapsed, at most ``MAX_MEMORY_CHARS``; raises
    ``ValueError`` with a message for the person when nothing is left or it is too long."""
    cleaned = " ".join(text.split())
    if not cleaned:
        raise ValueError("A memory needs some text.")
    if len(cleaned) > MAX_MEMORY_CHARS:
        raise ValueError(f"A memory is at most {MAX_MEMORY_CHARS} characters; this one has {len(cleaned)}.")
    return cleaned


def applying(memories: Iterable[Memory], agent_id: str, project_id: str | None) -> list[Memory]:
    """The memories a turn of ``agent_id`` in ``project_id`` sees, oldest first."""
    return sorted(
        (m for m in memories if m.applies_to(agent_id, project_id)), key=lambda m: (m.created_at, m.id)
    )


def memory_block(memories: Sequence[Memory]) -> str:
    """The system prompt's memory part; empty without memories."""
    if not memories:
        return ""
    return "\n".join([MEMORY_HEADING, *(f"- {m.text}" for m in memories)])
