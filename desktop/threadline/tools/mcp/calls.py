"""The tool calls an MCP connection has under way: whose they are and how far they got.

A server's question (``elicitation/create``) and its progress notifications arrive on the
SDK's own task, not the turn's, so the tool context (``threadline.tools.context``) that
says which conversation made the call is not there. The connection notes each call here
as it starts, from the turn's task; a question is then put to the conversation of the
call under way (the latest, when several are), and progress is told with the call's
conversation and tool. docs/mcp.md, "Elicitation and server instructions".
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from threadline.tools.context import current_tool_context

log = logging.getLogger("threadline.tools.mcp")


@dataclass(frozen=True, slots=True)
class CallProgress:
    """How far a running call got, as its server reported (``notifications/progress``).

    ``total`` is ``None`` when the server does not know it (a count, not a bar);
    ``done`` is set once when the call ends, so a shown progress can go away.
    """

    server: str
    tool: str
    session_id: str
    call: int
    progress: float = 0.0
    total: float | None = None
    message: str = ""
    done: bool = False


ProgressObserver = Callable[[CallProgress], None]


class ProgressCallback(Protocol):
    """The SDK's ``ProgressFnT``, named here without importing the SDK."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


@dataclass(slots=True)
class _Running:
    tool: str
    session_id: str


class CallTracker:
    """The calls of one connection under way; ``observer`` hears their progress."""

    def __init__(self, server: str, observer: ProgressObserver | None = None) -> None:
        self.server = server
        self.observer = observer
        self._running: dict[int, _Running] = {}
        self._numbers = itertools.count(1)

    @contextlib.contextmanager
    def running(self, tool: str) -> Iterator[ProgressCallback]:
        """Note a call of ``tool`` (from the caller's task); yields its progress callback (the SDK's
        ``progress_callback``: the SDK then sends a progress token with the request)."""
        try:
            session_id = current_tool_context().session_id
        except LookupError:  # not from a turn (a script, a test): nobody's conversation
            session_id = ""
        number = next(self._numbers)
        self._running[number] = _Running(tool, session_id)

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            self._tell(CallProgress(self.server, tool, session_id, number, progress, total, message or ""))

        try:
            yield progress
        finally:
            self._running.pop(number, None)
            self._tell(CallProgress(self.server, tool, session_id, number, done=True))

    def asker(self) -> tuple[str, str]:
        """``(session_id, tool)`` of the call a question belongs to: the latest under way."""
        if not self._running:
            return "", ""
        latest = self._running[max(self._running)]
        return latest.session_id, latest.tool

    def _tell(self, progress: CallProgress) -> None:
        if self.observer is None:
            return
        try:
            self.observer(progress)
        except Exception:
            log.exception("MCP progress observer failed")
