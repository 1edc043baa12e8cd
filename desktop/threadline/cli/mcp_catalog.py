"""The MCP servers' prompts and resources on the command line (through ``engine.mcp``).

``threadline mcp prompts NAME`` and ``threadline mcp resources NAME`` list them;
``threadline ask "/server:prompt name=value"`` sends the prompt's messages as the user's
turn (its embedded resources attached, as the window does), and ``ask --resource NAME:URI``
reads a resource and attaches it like ``--attach`` does a file. docs/mcp.md, "Prompts and
resources".
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from threadline.cli.common import CommandError
from threadline.core.mcp_catalog import missing_arguments, parse_prompt_command, parse_resource_ref
from threadline.core.messages import ContextFile, ImageBlock
from threadline.engine.errors import EngineError

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


async def print_prompts(engine: EngineApi, name: str, out: TextIO = sys.stdout) -> None:
    """One line a prompt: its command with the arguments it takes, then its description."""
    try:
        prompts = await engine.mcp.prompts(name)
    except EngineError as err:
        raise CommandError(err.user_message) from err
    for prompt in prompts:
        about = _first_line(prompt.description or prompt.title)
        print(f"{prompt.usage}\t{about}" if about else prompt.usage, file=out)


async def print_resources(engine: EngineApi, name: str, out: TextIO = sys.stdout) -> None:
    """One line a resource (URI, type, name), then the templates (their URI template, name)."""
    try:
        resources = await engine.mcp.resources(name)
        templates = await engine.mcp.templates(name)
    except EngineError as err:
        raise CommandError(err.user_message) from err
    for resource in resources:
        print("\t".join(p for p in (resource.uri, resource.mime_type, resource.label) if p), file=out)
    for template in templates:
        print("\t".join(p for p in (template.uri_template, "template", template.label) if p), file=out)


async def expand(
    engine: EngineApi,
    prompt: str,
    resources: list[str],
    context: tuple[ContextFile, ...],
    *,
    prompt_command: bool = True,
) -> tuple[str, tuple[ImageBlock, ...], tuple[ContextFile, ...]]:
    """The turn ``ask`` sends: a ``/server:prompt`` of a configured server replaced by the
    prompt's messages (unless ``prompt_command`` is False: it was escaped with ``//``), and
    each ``--resource`` read and attached."""
    images: list[ImageBlock] = []
    attached = list(context)
    command = parse_prompt_command(prompt) if prompt_command else None
    try:
        if command is not None and command.server in await engine.mcp.servers():
            if command.problem:
                raise CommandError(command.problem)
            info = await engine.mcp.find_prompt(command.server, command.prompt)
            missing = missing_arguments(info, command.arguments)
            if missing:
                raise CommandError(
                    f"/{info.command} needs {', '.join(m + '=…' for m in missing)} (usage: {info.usage})"
                )
            turn = await engine.mcp.get_prompt(command.server, command.prompt, command.arguments)
            for note in turn.notes:
                print(f"threadline: {note}", file=sys.stderr)
            prompt, images, attached = turn.text, [*turn.images], [*attached, *turn.context]
            print(f"prompt /{info.command}: {len(turn.context) + len(turn.images)} attached", file=sys.stderr)
        for ref in resources:
            try:
                server, uri = parse_resource_ref(ref)
            except ValueError as err:
                raise CommandError(f"--resource: {err}") from err
            for item in await engine.mcp.read(server, uri):
                (images if isinstance(item, ImageBlock) else attached).append(item)  # type: ignore[arg-type]
                print(f"attached {server}: {uri}", file=sys.stderr)
    except EngineError as err:
        raise CommandError(err.user_message) from err
    return prompt, tuple(images), tuple(attached)
