"""Projects: named groups of chats that share instructions and context files.

A project is what the ChatGPT and Claude apps call a project: a folder of chats in
the sidebar that may also carry its own instructions and sticky context. Every
chat in it runs with its agent's system prompt and context *plus* the project's,
so "answer in British English" or "the spec is in ~/work/spec.md" is said once for
a whole piece of work. A chat belongs to at most one project; deleting a project
moves its chats out and deletes nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from threadline.core.ids import new_id, utcnow
from threadline.core.sticky import StickyContext

if TYPE_CHECKING:  # the sidebar lists projects before the first paint; agents load after it
    from threadline.core.config import AgentConfig

MAX_PROJECT_NAME = 80
"""Characters of a project name: room for a sidebar row, not for a paragraph."""

PROJECT_COLOURS = (
    "#3b82f6",  # blue
    "#10b981",  # green
    "#f59e0b",  # amber
    "#ef4444",  # red
    "#8b5cf6",  # violet
    "#ec4899",  # pink
    "#14b8a6",  # teal
    "#64748b",  # slate
)
"""The palette offered when a project is made; the first unused one is the default."""

_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")


class ProjectError(ValueError):
    """A project that cannot be stored as given; ``user_message`` says what to change."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message


@dataclass(frozen=True, slots=True)
class Project:
    """One project: its name and colour in the sidebar, and what its chats are told."""

    id: str
    name: str
    colour: str = PROJECT_COLOURS[0]
    instructions: str = ""
    """Added to the system prompt of every chat in the project, after the agent's."""
    context: StickyContext = field(default_factory=StickyContext)
    """Files, folders, patterns and hooks every chat in the project sees, after the agent's."""
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)

    @classmethod
    def create(cls, name: str, *, colour: str = "", instructions: str = "") -> Project:
        return cls(id=new_id(), name=name, colour=colour or PROJECT_COLOURS[0], instructions=instructions)

    def validated(self) -> Project:
        """This project with its name trimmed; ``ProjectError`` when it cannot be stored."""
        name = " ".join(self.name.split())
        if not name:
            raise ProjectError("A project needs a name.")
        if len(name) > MAX_PROJECT_NAME:
            raise ProjectError(f"A project name can have at most {MAX_PROJECT_NAME} characters.")
        if not is_colour(self.colour):
            raise ProjectError(f"{self.colour!r} is not a colour; use the form #3b82f6.")
        return replace(self, name=name)


def is_colour(value: str) -> bool:
    """Whether ``value`` is a colour a project can have (``#rrggbb``)."""
    return bool(_COLOUR.match(value))


def next_colour(taken: list[str]) -> str:
    """The first palette colour no project uses yet (cycling once all are used)."""
    used = {c.lower() for c in taken}
    for colour in PROJECT_COLOURS:
        if colour not in used:
            return colour
    return PROJECT_COLOURS[len(taken) % len(PROJECT_COLOURS)]


def with_project(agent: AgentConfig, project: Project | None) -> AgentConfig:
    """The agent a chat in ``project`` runs with: the project's instructions and context added.

    The instructions follow the agent's system prompt under a heading, so a model
    reads them as the person's standing instructions for this piece of work; the
    context sources and hooks follow the agent's, so the agent's own files come
    first when the budget is tight.
    """
    if project is None or (not project.instructions.strip() and not project.context):
        return agent
    prompt = agent.system_prompt
    if project.instructions.strip():
        block = f"Instructions for the project “{project.name}”:\n{project.instructions.strip()}"
        prompt = f"{prompt.rstrip()}\n\n{block}" if prompt.strip() else block
    context = StickyContext(
        sources=(*agent.context.sources, *project.context.sources),
        hooks=(*agent.context.hooks, *project.context.hooks),
    )
    return replace(agent, system_prompt=prompt, context=context)
