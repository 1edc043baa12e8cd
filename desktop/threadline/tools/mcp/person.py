"""The person behind an MCP connection: who answers a server's elicitation and opens sign-in pages.

A server may ask the user something in the middle of a tool call (``elicitation/create``,
form or URL mode), and a remote server may need the user to sign in (OAuth). The
connection code never talks to a window or a terminal itself: it hands these moments to
an ``McpPerson`` the caller supplies. The window passes one that shows a form in the chat
and opens pages through the desktop; ``threadline ask`` passes ``TerminalPerson``
(``threadline.cli``); the conformance client passes one that accepts with the defaults.

With no person (a background start, a script with no terminal), an elicitation is
declined and a sign-in fails with a message saying where to sign in: nothing waits for
an answer that cannot come.

No module here imports the ``mcp`` SDK: the answers are plain data the connection turns
into the SDK's result types (``mcp_client``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

Action = Literal["accept", "decline", "cancel"]
Value = str | int | float | bool | list[str] | None


@dataclass(frozen=True, slots=True)
class FormRequest:
    """A form-mode elicitation: ``schema`` is the server's flat JSON schema (top-level properties)."""

    server: str
    message: str
    schema: Mapping[str, Any]
    session_id: str = ""
    """The conversation whose tool call asks ("" when not known): where the window shows the form."""
    tool: str = ""

    def properties(self) -> dict[str, dict[str, Any]]:
        props = self.schema.get("properties") or {}
        return {str(k): dict(v) for k, v in props.items() if isinstance(v, Mapping)}

    def required(self) -> set[str]:
        return {str(name) for name in self.schema.get("required") or ()}

    def defaults(self) -> dict[str, Value]:
        """The values the schema fills in (SEP-1034 ``default``), as an untouched form would send them."""
        return {name: prop["default"] for name, prop in self.properties().items() if "default" in prop}


@dataclass(frozen=True, slots=True)
class UrlRequest:
    """A URL-mode elicitation: the user is asked to open ``url`` (e.g. to enter a payment out of band)."""

    server: str
    message: str
    url: str
    elicitation_id: str = ""
    session_id: str = ""
    tool: str = ""

    @property
    def host(self) -> str:
        """What to show next to the link: the host the page is really on."""
        return urlsplit(self.url).hostname or self.url


@dataclass(frozen=True, slots=True)
class Answer:
    """What the person did: ``accept`` (with ``content`` in form mode), ``decline`` or ``cancel``."""

    action: Action
    content: dict[str, Value] = field(default_factory=dict)

    @classmethod
    def declined(cls) -> Answer:
        return cls("decline")


class McpPerson(Protocol):
    """Answers for one user; every method may wait as long as the person takes."""

    async def answer_form(self, request: FormRequest) -> Answer:
        """Show the form; ``Answer("accept", values)``, ``decline`` or ``cancel``."""
        ...

    async def answer_url(self, request: UrlRequest) -> Answer:
        """Ask for consent to open the page; on ``accept`` the page has been opened."""
        ...

    async def open_sign_in(self, server: str, url: str) -> None:
        """Open the authorization page of ``server``'s sign in (a browser); returns once opened."""
        ...


class DefaultsPerson:
    """A person who accepts every form with its defaults and follows every link: for tests and
    the conformance client, where nobody sits at the screen. ``opened`` records the pages."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    async def answer_form(self, request: FormRequest) -> Answer:
        return Answer("accept", request.defaults())

    async def answer_url(self, request: UrlRequest) -> Answer:
        self.opened.append(request.url)
        return Answer("accept")

    async def open_sign_in(self, server: str, url: str) -> None:
        self.opened.append(url)
