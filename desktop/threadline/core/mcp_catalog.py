"""What an MCP server offers besides tools, as the rest of the app names it: prompts and resources.

Pure (no SDK, no Qt): the engine's ``engine.mcp`` facet fills these from the servers
(``tools/mcp/catalog.py``), the composer and the command line read them. docs/mcp.md,
"Prompts and resources", says how they reach a conversation.

A prompt is run as ``/server:prompt`` followed by its arguments as ``name=value`` words
(a value with spaces in quotes: ``topic="solar power"``). A resource is named
``server:uri`` (``threadline ask --resource everything:demo://resource/static/document/x.md``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from threadline.core.messages import ContextFile, ImageBlock

_PROMPT_WORD = re.compile(r"/([A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*):([^\s:][^\s]*)(?=\s|$)")
_TEMPLATE_VARIABLE = re.compile(r"\{([+#./;?&]?)([A-Za-z0-9_.,*]+)\}")


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True, slots=True)
class PromptInfo:
    """One prompt of a server: the ``/server:prompt`` command and what its form asks for."""

    server: str
    name: str
    title: str = ""
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()

    @property
    def command(self) -> str:
        """The command word without its slash: ``server:prompt``."""
        return f"{self.server}:{self.name}"

    @property
    def hint(self) -> str:
        """The arguments as typed after the command (``name=… [style=…]``)."""
        return " ".join(a.name + "=…" if a.required else f"[{a.name}=…]" for a in self.arguments)

    @property
    def usage(self) -> str:
        return f"/{self.command} {self.hint}".rstrip()


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """One resource a server lists (``resources/list``)."""

    server: str
    uri: str
    name: str
    title: str = ""
    description: str = ""
    mime_type: str = ""

    @property
    def label(self) -> str:
        return self.title or self.name or self.uri


@dataclass(frozen=True, slots=True)
class ResourceTemplateInfo:
    """A parameterised resource (``resources/templates/list``): its variables get a form."""

    server: str
    uri_template: str
    name: str
    title: str = ""
    description: str = ""
    mime_type: str = ""

    @property
    def label(self) -> str:
        return self.title or self.name or self.uri_template

    def variables(self) -> list[str]:
        return template_variables(self.uri_template)

    def expand(self, values: dict[str, str]) -> str:
        return expand_template(self.uri_template, values)


@dataclass(frozen=True, slots=True)
class PromptTurn:
    """A prompt's messages as the user's turn: the text, its images, its embedded resources."""

    text: str
    images: tuple[ImageBlock, ...] = ()
    context: tuple[ContextFile, ...] = ()
    notes: tuple[str, ...] = field(default=())
    """What could not be carried (audio, an assistant message's role), said to the user."""


@dataclass(frozen=True, slots=True)
class PromptCommand:
    """``/server:prompt name=value …`` as typed; ``problem`` says what is wrong with the arguments."""

    server: str
    prompt: str
    arguments: dict[str, str]
    problem: str = ""


@dataclass(frozen=True, slots=True)
class CatalogChange:
    """A server said its prompts or resources changed, or that a subscribed resource did.

    ``kind``: ``"prompts"``, ``"resources"`` (the lists) or ``"resource"`` (``uri`` changed).
    """

    server: str
    kind: str
    uri: str = ""


def parse_prompt_command(text: str) -> PromptCommand | None:
    """``/server:prompt a=1 b="x y"`` → its parts; ``None`` when ``text`` does not start so."""
    match = _PROMPT_WORD.match(text)
    if match is None:
        return None
    server, prompt = match.group(1), match.group(2)
    rest = text[match.end() :].strip()
    try:
        arguments, problem = parse_arguments(rest)
    except ValueError as err:
        arguments, problem = {}, f"The arguments of /{server}:{prompt} could not be read ({err})."
    return PromptCommand(server, prompt, arguments, problem)


def parse_arguments(text: str) -> tuple[dict[str, str], str]:
    """``name=value`` words (shell quoting) → the values, and a problem ("" when none)."""
    values: dict[str, str] = {}
    for word in shlex.split(text):
        name, equals, value = word.partition("=")
        if not equals or not name:
            return values, f"“{word}” is not name=value; write each argument as name=value."
        values[name] = value
    return values, ""


def missing_arguments(prompt: PromptInfo, values: dict[str, str]) -> list[str]:
    """The required arguments of ``prompt`` with no value in ``values``."""
    return [a.name for a in prompt.arguments if a.required and not values.get(a.name, "").strip()]


def command_text(prompt: PromptInfo, values: dict[str, str]) -> str:
    """The command line that runs ``prompt`` with ``values`` (quoted where needed)."""
    words = [f"/{prompt.command}"]
    words += [f"{name}={shlex.quote(value)}" for name, value in values.items() if value != ""]
    return " ".join(words)


def template_variables(template: str) -> list[str]:
    """The variable names of an RFC 6570 URI template, in order (``{a}``, ``{+a}``, ``{?a,b}``)."""
    names: list[str] = []
    for match in _TEMPLATE_VARIABLE.finditer(template):
        for name in match.group(2).split(","):
            name = name.rstrip("*")
            if name and name not in names:
                names.append(name)
    return names


def expand_template(template: str, values: dict[str, str]) -> str:
    """``template`` with its variables filled (simple, reserved, path and query forms of RFC 6570)."""
    from urllib.parse import quote

    def fill(match: re.Match[str]) -> str:
        operator, names = match.group(1), [n.rstrip("*") for n in match.group(2).split(",")]
        safe = ":/?#[]@!$&'()*+,;=" if operator in ("+", "#") else ""
        given = [(n, quote(values[n], safe=safe)) for n in names if values.get(n, "") != ""]
        if not given:
            return ""
        if operator in ("?", "&"):
            return operator + "&".join(f"{n}={v}" for n, v in given)
        if operator == ";":
            return "".join(f";{n}={v}" for n, v in given)
        joined = ",".join(v for _, v in given)
        return {"#": "#", ".": ".", "/": "/"}.get(operator, "") + joined

    return _TEMPLATE_VARIABLE.sub(fill, template)


def resource_name(server: str, uri: str) -> str:
    """What an attached resource's chip and context file are called: its server and URI."""
    return f"{server}: {uri}"


def parse_resource_ref(text: str) -> tuple[str, str]:
    """``NAME:URI`` (``ask --resource``) → (server, uri); ``ValueError`` when either is missing."""
    server, colon, uri = text.partition(":")
    if not colon or not server or not uri:
        raise ValueError(f"“{text}” is not NAME:URI (e.g. everything:demo://resource/static/document/x.md)")
    return server, uri
