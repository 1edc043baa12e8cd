"""``engine.mcp_people``: the person behind the MCP servers, as the window is it.

A server may ask the user something in the middle of a tool call (elicitation), open a
page (URL mode), or need a sign in (OAuth); and its long calls report progress. The
connection code hands the questions to an ``McpPerson`` (``tools/mcp/person.py``). The
window's person (``ui/window/mcp_person.py``) puts each question into the chat of the
conversation whose tool call asks, and opens pages through the desktop; it reaches the
servers only through this facet, which also re-exports the request and answer types so
that widgets need not name ``tools/``. With no person set (before the window is live,
after it closed) every question is declined: nothing waits for an answer that cannot come.
docs/mcp.md, "Elicitation and server instructions".
"""

from __future__ import annotations

from collections.abc import Callable

from threadline.tools.context import current_tool_context
from threadline.tools.mcp.calls import CallProgress
from threadline.tools.mcp.manager import McpServerManager
from threadline.tools.mcp.person import Answer, FormRequest, McpPerson, UrlRequest

__all__ = ["Answer", "CallProgress", "FormRequest", "McpPeople", "McpPerson", "UrlRequest"]


class McpPeople:
    """Who answers the servers (``set_person``) and who hears the calls' progress."""

    def __init__(self, servers: McpServerManager) -> None:
        self._servers = servers

    def set_person(self, person: McpPerson | None) -> None:
        """The window at start (its person), and ``None`` as it closes."""
        self._servers.set_person(person)

    @property
    def person(self) -> McpPerson | None:
        return self._servers.person

    def asking_session(self) -> str:
        """The conversation whose turn this code runs for ("" outside a turn): a sign in that a
        tool call needs runs in the call's context (the connection's task is started from it),
        one from Settings or the command line does not."""
        try:
            return current_tool_context().session_id
        except LookupError:
            return ""

    def subscribe_progress(self, callback: Callable[[CallProgress], None]) -> Callable[[], None]:
        """``callback(progress)`` as MCP tool calls report progress, and once as each ends."""
        return self._servers.subscribe_progress(callback)
