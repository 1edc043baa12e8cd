"""Records about sessions as the sidebar and the engine see them (no messages)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from threadline.core.ids import utcnow
from threadline.core.sticky import StickyContext


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One conversation's listing: what the sidebar shows and the engine needs to start it."""

    id: str
    title: str = ""
    title_set_by_user: bool = False
    pinned: bool = False
    archived: bool = False
    folder: str = ""
    agent_id: str = ""
    provider: str = ""
    model: str = ""
    active_leaf: str | None = None
    preview: str = ""
    """The start of the newest message text, one line, for the sidebar."""
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    checkpoints: dict[str, str] = field(default_factory=dict)
    context: StickyContext = field(default_factory=StickyContext)
    """Sticky context of this session only, on top of its agent's."""
    project_id: str | None = None
    """The project the chat belongs to (``threadline.core.project``), if any."""

    @property
    def display_title(self) -> str:
        return self.title or "New chat"


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A full-text match: where it is and a snippet with each hit between SNIPPET_OPEN and SNIPPET_CLOSE."""

    session_id: str
    message_id: str
    session_title: str
    snippet: str
    created_at: datetime


SNIPPET_OPEN = "\u0002"
SNIPPET_CLOSE = "\u0003"
"""Markers around matched words in ``SearchHit.snippet`` (control characters, never in user text)."""


def automatic_title(prompt: str, limit: int = 60) -> str:
    """A title from the first prompt: its first line, trimmed at a word boundary."""
    line = next((ln.strip() for ln in prompt.splitlines() if ln.strip()), "")
    if len(line) <= limit:
        return line
    cut = line[:limit].rsplit(" ", 1)[0] or line[:limit]
    return cut.rstrip(" ,.;:") + "…"
