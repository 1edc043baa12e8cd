"""Request-scoped context for a running tool (docs/design.md §1, history as source of truth).

The engine sets this around each tool call, so a tool can read the session's
history and derive state from it (``threadline.core.derived``) instead of
keeping its own memory, which would be lost on restart and differ between two
app instances sharing one database.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from threadline.core.messages import Message


@dataclass(frozen=True, slots=True)
class ToolContext:
    session_id: str
    history: tuple[Message, ...]
    allowed_folders: tuple[str, ...] = ()


_current: ContextVar[ToolContext | None] = ContextVar("threadline_tool_context", default=None)


def current_tool_context() -> ToolContext:
    """The context of the tool call being run; raises outside of one."""
    context = _current.get()
    if context is None:
        raise LookupError("no tool call is running")
    return context


@contextmanager
def tool_context(
    session_id: str, history: Sequence[Message], allowed_folders: Sequence[str] = ()
) -> Iterator[ToolContext]:
    context = ToolContext(session_id, tuple(history), tuple(allowed_folders))
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)
