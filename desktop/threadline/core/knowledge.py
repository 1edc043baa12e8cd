"""Knowledge bases as the user defines them: a name, folders and files, an embedding model, where attached.

The index itself is local derived data (``threadline.knowledge``); this is only the
definition, which the engine keeps with the other settings (docs/knowledge.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class AttachScope(StrEnum):
    PROJECT = "project"
    AGENT = "agent"
    SESSION = "session"


@dataclass(frozen=True, slots=True)
class KnowledgeBase:
    id: str
    name: str
    paths: tuple[str, ...]
    embed_provider: str = ""
    """Provider serving ``/v1/embeddings``; "" for keyword search only."""
    embed_model: str = ""
    attached: tuple[tuple[AttachScope, str], ...] = ()
    """The projects, agents and chats (by id) whose messages draw on this base."""

    @property
    def embeds(self) -> bool:
        return bool(self.embed_provider and self.embed_model)

    def attached_to(self, *, session_id: str = "", agent_id: str = "", project_id: str = "") -> bool:
        wanted = {
            (AttachScope.SESSION, session_id),
            (AttachScope.AGENT, agent_id),
            (AttachScope.PROJECT, project_id),
        }
        return any(pair in wanted for pair in self.attached if pair[1])

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "paths": list(self.paths),
            "embed_provider": self.embed_provider,
            "embed_model": self.embed_model,
            "attached": [[scope.value, target] for scope, target in self.attached],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KnowledgeBase:
        return cls(
            id=str(data["id"]),
            name=str(data["name"]),
            paths=tuple(str(p) for p in data.get("paths", ())),
            embed_provider=str(data.get("embed_provider", "")),
            embed_model=str(data.get("embed_model", "")),
            attached=tuple(
                (AttachScope(scope), str(target))
                for scope, target in data.get("attached", ())
                if scope in AttachScope._value2member_map_
            ),
        )
