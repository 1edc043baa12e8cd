"""The person at the terminal, for MCP servers' questions and sign ins (``threadline ask``, ``mcp login``).

A server may ask something in the middle of a tool call (elicitation): on a terminal the
form is asked field by field on standard error/input (Enter keeps the default; ``-``
declines, ``!`` cancels); a URL question shows the page's host and opens it with the
user's consent. Without a terminal (a script, a pipe) nobody can answer, so each question
is declined with one line on standard error and the tool goes on without it. A sign in
opens the browser and prints the address (without a terminal it refuses, saying to run
``threadline mcp login NAME`` in one: a script must not wait minutes for a browser).
"""

from __future__ import annotations

import asyncio
import sys
import webbrowser
from collections.abc import Callable
from typing import Any, TextIO

from threadline.tools.mcp.oauth import SignInError
from threadline.tools.mcp.person import Answer, FormRequest, UrlRequest, Value

MAX_TRIES = 3


class TerminalPerson:
    """``McpPerson`` on a terminal; ``interactive=False`` declines every question."""

    def __init__(
        self,
        *,
        interactive: bool,
        input: TextIO | None = None,
        out: TextIO | None = None,
        open_url: Callable[[str], object] | None = None,
    ) -> None:
        self.interactive = interactive
        self._input = input or sys.stdin
        self._out = out or sys.stderr
        self._open_url = open_url or (lambda url: webbrowser.open(url))
        self._lock = asyncio.Lock()  # one question at a time on one terminal

    @classmethod
    def for_stdio(cls, *, stdin_used: bool = False) -> TerminalPerson:
        """Interactive when standard input is a terminal that the prompt was not read from."""
        return cls(interactive=not stdin_used and sys.stdin.isatty())

    def _say(self, text: str) -> None:
        print(text, file=self._out, flush=True)

    async def _read(self, prompt: str) -> str | None:
        self._out.write(prompt)
        self._out.flush()
        line = await asyncio.to_thread(self._input.readline)
        return None if line == "" else line.rstrip("\r\n")  # "" is the end of input

    async def answer_form(self, request: FormRequest) -> Answer:
        if not self.interactive:
            self._say(
                f"threadline: MCP server {request.server} asked “{request.message}”; declined "
                "(no terminal to answer on)"
            )
            return Answer.declined()
        async with self._lock:
            self._say(f"MCP server {request.server} asks: {request.message}")
            self._say("  (Enter keeps the value in [brackets]; - declines, ! cancels)")
            required = request.required()
            content: dict[str, Value] = {}
            for name, prop in request.properties().items():
                answer = await self._field(name, prop, name in required)
                if isinstance(answer, Answer):
                    return answer
                if answer is not _SKIP:
                    content[name] = answer  # type: ignore[assignment]  # a Value (Answer and _SKIP are out)
            return Answer("accept", content)

    async def _field(self, name: str, prop: dict[str, Any], required: bool) -> Value | Answer | object:
        label = str(prop.get("title") or name)
        hint = _hint(prop)
        default = prop.get("default")
        shown = f" [{_show(default)}]" if default is not None else ""
        mark = " (required)" if required else ""
        if prop.get("description"):
            self._say(f"  {label}: {prop['description']}")
        for _ in range(MAX_TRIES):
            line = await self._read(f"  {label}{mark}{hint}{shown}: ")
            if line is None or line.strip() == "!":
                return Answer("cancel")
            text = line.strip()
            if text == "-":
                return Answer.declined()
            if not text:
                if default is not None:
                    return default  # type: ignore[no-any-return]
                if not required:
                    return _SKIP
                self._say("    a value is needed")
                continue
            value, problem = _parse(text, prop)
            if problem:
                self._say(f"    {problem}")
                continue
            return value
        self._say("    no valid value; the question is cancelled")
        return Answer("cancel")

    async def answer_url(self, request: UrlRequest) -> Answer:
        if not self.interactive:
            self._say(
                f"threadline: MCP server {request.server} asked to open a page on {request.host} "
                f"(“{request.message}”); declined (no terminal to answer on)"
            )
            return Answer.declined()
        async with self._lock:
            self._say(f"MCP server {request.server} asks: {request.message}")
            self._say(f"  It wants you to open a page on {request.host}: {request.url}")
            line = await self._read("  Open it in your browser? [y/N] ")
            if line is None:
                return Answer("cancel")
            if line.strip().lower() not in ("y", "yes"):
                return Answer.declined()
            self._open_url(request.url)
            return Answer("accept")

    async def open_sign_in(self, server: str, url: str) -> None:
        if not self.interactive:
            raise SignInError(
                f"MCP server {server!r} needs you to sign in, and there is no terminal here to do it on. "
                f"Run `threadline mcp login {server}` in a terminal first."
            )
        self._say(f"Sign in to MCP server {server} in your browser. If it does not open, visit:\n  {url}")
        self._open_url(url)


_SKIP = object()


def _hint(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    choices = prop.get("enum")
    if choices:
        return f" ({'/'.join(str(c) for c in choices)})"
    if isinstance(prop.get("oneOf"), list):
        return f" ({'/'.join(str(c.get('const')) for c in prop['oneOf'] if isinstance(c, dict))})"
    if kind == "boolean":
        return " (y/n)"
    if kind in ("integer", "number"):
        return f" ({kind})"
    if prop.get("format"):
        return f" ({prop['format']})"
    return ""


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "y" if value else "n"
    return str(value)


def _parse(text: str, prop: dict[str, Any]) -> tuple[Value, str]:
    """``text`` as the schema's type, or a problem to tell the user."""
    kind = prop.get("type")
    choices = prop.get("enum") or [c.get("const") for c in prop.get("oneOf") or () if isinstance(c, dict)]
    if choices:
        return (text, "") if text in choices else (None, f"one of: {', '.join(str(c) for c in choices)}")
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true"):
            return True, ""
        if text.lower() in ("n", "no", "false"):
            return False, ""
        return None, "y or n"
    if kind == "integer":
        try:
            return int(text), ""
        except ValueError:
            return None, "a whole number"
    if kind == "number":
        try:
            return float(text), ""
        except ValueError:
            return None, "a number"
    return text, ""
